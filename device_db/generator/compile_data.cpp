// kcache_device_db_compile: turns the device data files into C++ at build time.
//   kcache_device_db_compile OUT.cpp ROOT FILE...
// Each FILE is read and checked exactly as an override file is at run time
// (parse_data_file, then every file layered in order with DeviceDb::from_files),
// so broken shipped data fails the build with "file:line: problem". The output
// defines builtin_data_files(), which builds the same records without parsing
// anything: a process pays for no JSON before its first cache hit. Records
// keep their origin (the file's path relative to ROOT, and its line).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kcache/common/read_file.hpp"
#include "kcache/device_db/database.hpp"
#include "kcache/device_db/loader.hpp"

namespace {

using namespace kcache::device_db;

// `s` as a C++ string literal; every byte outside printable ASCII, and the
// quote, backslash and '?' (trigraphs), as a three-digit octal escape.
std::string literal(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '?') {
            out += static_cast<char>(c);
        } else {
            char esc[5];
            std::snprintf(esc, sizeof esc, "\\%03o", c);
            out += esc;
        }
    }
    return out + "\"";
}

std::string hex(std::uint32_t v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%xu", v);
    return buf;
}

std::string origin(const Origin& o) {
    return "Origin{file, " + std::to_string(o.line) + "}";
}

std::string name_of(OclocSupport s) {
    return s == OclocSupport::supported ? "OclocSupport::supported" : "OclocSupport::unsupported";
}
std::string name_of(GpuKind k) {
    return std::string("GpuKind::") + to_string(k);
}
std::string name_of(AotList a) {
    return a == AotList::listed ? "AotList::listed" : "AotList::not_listed";
}
std::string name_of(QuirkAction a) {
    return std::string("QuirkAction::") + to_string(a);
}

template <class T, class F>
std::string list(const std::vector<T>& items, F each) {
    std::string out = "{";
    for (std::size_t i = 0; i < items.size(); ++i) {
        out += (i ? ", " : "") + each(items[i]);
    }
    return out + "}";
}

std::string version(const std::optional<DriverVersion>& v) {
    return v ? "*DriverVersion::parse(" + literal(v->to_string()) + ")" : "std::nullopt";
}

// Writes `rows` (each one line of values, from `row`) as the constant
// table `name` of row type `type`; returns the span that names it (an empty
// span for no rows: C++ has no empty arrays).
template <class T, class F>
std::string write_table(std::ostream& out, const char* type, const char* name,
                        const std::vector<T>& rows, F row) {
    const std::string span = std::string("std::span<const rows::") + type + ">";
    if (rows.empty()) {
        return span + "()";
    }
    out << "    static constexpr rows::" << type << " " << name << "[] = {\n";
    for (const T& r : rows) {
        out << "        {" << row(r) << "},\n";
    }
    out << "    };\n";
    return span + "(" + name + ")";
}

// The vendor, family and device rows of `f` as constant tables (rows:: of
// builtin_rows.hpp), one line per record, and the loop that appends them.
void write_rows(std::ostream& out, const DataFile& f) {
    const std::string vendors =
        write_table(out, "Vendor", "vendors", f.vendors, [](const VendorRecord& v) {
            return hex(v.id) + ", " + literal(v.name) + ", " + std::to_string(v.origin.line);
        });
    const std::string families =
        write_table(out, "Family", "families", f.families, [](const FamilyRecord& r) {
            return literal(r.name) + ", " + literal(r.codename) + ", " + literal(r.generation) +
                   ", " + literal(r.architecture) + ", IpVersion{" +
                   std::to_string(r.ip_version.major) + ", " + std::to_string(r.ip_version.minor) +
                   ", " + std::to_string(r.ip_version.revision) + "}, " + literal(r.ocloc_target) +
                   ", " + name_of(r.ocloc) + ", " + name_of(r.kind) + ", " + name_of(r.aot) + ", " +
                   (r.prefer_il ? "true" : "false") + ", " + literal(r.notes) + ", " +
                   std::to_string(r.origin.line);
        });
    const std::string devices =
        write_table(out, "Device", "devices", f.devices, [](const DeviceRecord& d) {
            return hex(d.vendor_id) + ", " + hex(d.pci_id) + ", " + literal(d.name) + ", " +
                   literal(d.product) + ", " + literal(d.family) + ", " +
                   std::to_string(d.origin.line);
        });
    out << "    rows::append(f, " << vendors << ", " << families << ", " << devices << ");\n";
}

void write_file(std::ostream& out, const DataFile& f, std::size_t index) {
    out << "DataFile file" << index << "() {\n"
        << "    DataFile f;\n"
        << "    const std::string file = " << literal(f.file) << ";\n"
        << "    f.file = file;\n";
    write_rows(out, f);
    out << "    f.quirks.reserve(" << f.quirks.size() << ");\n";
    for (const QuirkRule& q : f.quirks) {
        out << "    {\n        QuirkRule q;\n        q.id = " << literal(q.id) << ";\n";
        if (q.vendor_id) {
            out << "        q.vendor_id = " << hex(*q.vendor_id) << ";\n";
        }
        out << "        q.pci_ids = " << list(q.pci_ids, hex) << ";\n"
            << "        q.pci_id_ranges = "
            << list(q.pci_id_ranges,
                    [](const IdRange& r) {
                        return "IdRange{" + hex(r.first) + ", " + hex(r.last) + "}";
                    })
            << ";\n"
            << "        q.families = " << list(q.families, literal) << ";\n"
            << "        q.codenames = " << list(q.codenames, literal) << ";\n"
            << "        q.platforms = " << list(q.platforms, literal) << ";\n"
            << "        q.environment = " << list(q.environment, literal) << ";\n";
        if (q.driver) {
            out << "        q.driver = VersionRange{" << version(q.driver->min) << ", "
                << version(q.driver->max) << "};\n";
        }
        out << "        q.actions = " << list(q.actions, [](QuirkAction a) { return name_of(a); })
            << ";\n";
        if (q.jit_timeout_ms) {
            out << "        q.jit_timeout_ms = " << *q.jit_timeout_ms << "u;\n";
        }
        out << "        q.notes = " << literal(q.notes) << ";\n"
            << "        q.origin = " << origin(q.origin) << ";\n"
            << "        f.quirks.push_back(std::move(q));\n    }\n";
    }
    out << "    return f;\n}\n\n";
}

// Writes the C++ source that holds `files` to `out_path` (beside it, then
// renamed); returns the process's exit code.
int write_generated(const std::filesystem::path& out_path, const std::vector<DataFile>& files) {
    std::ostringstream out;
    out << "// Generated from the device data files by device_db/generator/compile_data.cpp;\n"
           "// do not edit.\n"
           "#include \"builtin_rows.hpp\"\n"
           "#include \"kcache/device_db/loader.hpp\"\n\n"
           "namespace kcache::device_db {\nnamespace {\n\n";
    for (std::size_t i = 0; i < files.size(); ++i) {
        write_file(out, files[i], i);
    }
    out << "}  // namespace\n\n"
           "Result<std::vector<DataFile>, DeviceDbError> builtin_data_files() {\n"
           "    std::vector<DataFile> files;\n"
           "    files.reserve("
        << files.size() << ");\n";
    for (std::size_t i = 0; i < files.size(); ++i) {
        out << "    files.push_back(file" << i << "());\n";
    }
    out << "    return files;\n}\n\n}  // namespace kcache::device_db\n";
    // Written beside and renamed: an interrupted build never leaves half a file.
    const std::filesystem::path tmp = out_path.string() + ".tmp";
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        f << out.str();
        if (!f.flush()) {
            std::fprintf(stderr, "kcache_device_db_compile: cannot write %s\n", tmp.c_str());
            return 1;
        }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, out_path, ec);
    if (ec) {
        std::fprintf(stderr, "kcache_device_db_compile: cannot write %s: %s\n", out_path.c_str(),
                     ec.message().c_str());
        return 1;
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: kcache_device_db_compile OUT.cpp ROOT FILE...\n");
        return 2;
    }
    const std::filesystem::path out_path = argv[1];
    const std::filesystem::path root = argv[2];
    std::vector<DataFile> files;
    for (int i = 3; i < argc; ++i) {
        const std::filesystem::path path = argv[i];
        auto text = kcache::read_regular_file(path, 16u << 20);
        if (!text) {
            std::fprintf(stderr, "kcache_device_db_compile: %s\n", text.error().message.c_str());
            return 1;
        }
        auto file = parse_data_file(*text, path.lexically_relative(root).generic_string());
        if (!file) {
            std::fprintf(stderr, "%s\n", file.error().message.c_str());
            return 1;
        }
        files.push_back(std::move(*file));
    }
    if (auto db = DeviceDb::from_files(files); !db) {
        std::fprintf(stderr, "%s\n", db.error().message.c_str());
        return 1;
    }
    return write_generated(out_path, files);
}
