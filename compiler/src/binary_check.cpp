#include "kcache/compiler/binary_check.hpp"

#include <cstdint>
#include <cstring>

namespace kcache::compiler {
namespace {

std::uint64_t le(std::string_view b, std::size_t at, int n) {
    std::uint64_t v = 0;
    for (int i = 0; i < n; ++i) {
        v |= std::uint64_t(static_cast<unsigned char>(b[at + i])) << (8 * i);
    }
    return v;
}

bool is_device_section(std::string_view name) {
    return name == "Intel(R) OpenCL Device Binary" || name.rfind(".text.", 0) == 0;
}

constexpr std::size_t kElfHeader = 64;
constexpr std::size_t kSectionHeader = 64;
constexpr std::size_t kArHeader = 60;

Unexpected<CompilerError> bad_binary(std::string message) {
    return fail(CompilerError{CompilerErrc::bad_binary, std::move(message)});
}

}  // namespace

Result<std::string, CompilerError> check_device_elf(std::string_view b) {
    if (b.size() < kElfHeader || b.substr(0, 4) !=
                                     "\x7f"
                                     "ELF") {
        return bad_binary("not an ELF file");
    }
    if (b[4] != 2 || b[5] != 1) {
        return bad_binary("not a 64-bit little-endian ELF");
    }
    const std::uint64_t shoff = le(b, 0x28, 8);
    const std::uint64_t shentsize = le(b, 0x3a, 2);
    const std::uint64_t shnum = le(b, 0x3c, 2);
    const std::uint64_t shstrndx = le(b, 0x3e, 2);
    if (shentsize != kSectionHeader || shnum == 0 || shstrndx >= shnum || shoff > b.size() ||
        shnum * kSectionHeader > b.size() - shoff) {
        return bad_binary("ELF section table is malformed or outside the file");
    }
    auto header = [&](std::uint64_t i) { return shoff + i * kSectionHeader; };
    const std::uint64_t str_off = le(b, header(shstrndx) + 0x18, 8);
    const std::uint64_t str_size = le(b, header(shstrndx) + 0x20, 8);
    if (str_off > b.size() || str_size > b.size() - str_off) {
        return bad_binary("ELF section name table lies outside the file");
    }
    const std::string_view names = b.substr(str_off, str_size);
    std::string all;
    bool device = false;
    for (std::uint64_t i = 1; i < shnum; ++i) {
        const std::uint64_t name_at = le(b, header(i), 4);
        const std::uint64_t off = le(b, header(i) + 0x18, 8);
        const std::uint64_t size = le(b, header(i) + 0x20, 8);
        const std::uint64_t type = le(b, header(i) + 0x04, 4);
        if (name_at >= names.size()) {
            return bad_binary("ELF section " + std::to_string(i) + " has a bad name offset");
        }
        if (type != 8 /* SHT_NOBITS */ && (off > b.size() || size > b.size() - off)) {
            return bad_binary("ELF section " + std::to_string(i) + " lies outside the file");
        }
        const std::string_view rest = names.substr(name_at);
        const std::string_view name = rest.substr(0, rest.find('\0'));
        device = device || (is_device_section(name) && size > 0);
        all += std::string(all.empty() ? "" : ";") + std::string(name);
    }
    if (!device) {
        return bad_binary("ELF has no device binary section (sections: " + all + ")");
    }
    return all;
}

Result<std::size_t, CompilerError> check_fat_binary(std::string_view b) {
    if (b.substr(0, 8) != "!<arch>\n") {
        return bad_binary("not an ar archive");
    }
    std::size_t pos = 8;
    std::size_t elves = 0;
    while (pos < b.size()) {
        if (b.size() - pos < kArHeader || b.substr(pos + 58, 2) != "`\n") {
            return bad_binary("archive member header at " + std::to_string(pos) + " is malformed");
        }
        std::string name(b.substr(pos, 16));
        name = name.substr(0, name.find_last_not_of(' ') + 1);
        if (!name.empty() && name.back() == '/') {
            name.pop_back();
        }
        const std::string size_field(b.substr(pos + 48, 10));
        const std::size_t size = std::strtoull(size_field.c_str(), nullptr, 10);
        pos += kArHeader;
        if (size > b.size() - pos) {
            return bad_binary("archive member '" + name + "' runs past the end");
        }
        if (name.rfind("pad_", 0) != 0) {
            if (auto elf = check_device_elf(b.substr(pos, size)); !elf) {
                return bad_binary("archive member '" + name + "': " + elf.error().message);
            }
            ++elves;
        }
        pos += size + (size & 1);
    }
    if (elves == 0) {
        return bad_binary("archive holds no device binary");
    }
    return elves;
}

bool looks_like_spirv(std::string_view b) {
    return b.size() >= 20 && le(b, 0, 4) == 0x07230203;
}

}  // namespace kcache::compiler
