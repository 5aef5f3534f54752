// Loader validation: every kind of problem is an error located at its exact line.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "device_fixtures.hpp"
#include "kcache/common/read_file.hpp"
#include "kcache/device_db/loader.hpp"
#include "temp_dir.hpp"

namespace kcache::device_db {

using test::DataFileProblem;

namespace {

// A family line that passes validation; tests splice it into their documents.
const char* const kFamily =
    R"({"name": "tgllp", "codename": "Tiger Lake", "generation": "Gen12", )"
    R"("architecture": "xe-lp", "ip_version": "12.0.0", "ocloc_target": "tgllp", )"
    R"("ocloc": "supported", "kind": "integrated", "aot_default": true})";

std::string doc_with(const std::string& families, const std::string& rest) {
    return "{\n\"schema\": 1,\n\"families\": [\n" + families + "\n],\n" + rest + "\n}\n";
}

// The only problem of parsing `text` as "t.json" (fails the test if there is not one).
Diagnostic only_problem(const std::string& text) {
    return test::only_problem(text, "t.json");
}

// A file whose family has `from` replaced by `to` (on line 4).
std::string family_with(const std::string& from, const std::string& to) {
    std::string family = kFamily;
    family.replace(family.find(from), from.size(), to);
    return doc_with(family, "\"notes\": \"\"");
}

const std::string kDevice = R"({"pci_id": "0x56a0", "product": "A770", "family": "tgllp"})";

// Files with one problem each, located at its line (read as "t.json").
const test::OneProblem kOneProblem[] = {
    {"UnknownKeyAtTheKeysLine",
     doc_with(kFamily,
              "\"devices\": [\n"
              "  {\"pci_id\": \"0x9a49\",\n"
              "   \"product\": \"Iris Xe\",\n"
              "   \"colour\": \"blue\",\n"
              "   \"family\": \"tgllp\"}\n"
              "]"),
     DeviceDbErrc::unknown_key, "t.json:9: unknown key \"colour\" in device"},
    {"UnknownTopLevelKey", "{\n\"schema\": 1,\n\"devcies\": []\n}\n", DeviceDbErrc::unknown_key,
     "t.json:3: unknown key \"devcies\" in data file"},
    {"DuplicatePciIdWithBothLines",
     doc_with(kFamily, "\"devices\": [\n" + kDevice + ",\n" + kDevice + "\n]"),
     DeviceDbErrc::duplicate, "t.json:8: duplicate pci_id 0x56a0 (first at line 7)"},
    {"DuplicateFamilyName", doc_with(std::string(kFamily) + ",\n" + kFamily, "\"notes\": \"\""),
     DeviceDbErrc::duplicate, "t.json:5: duplicate family \"tgllp\" (first at line 4)"},
    {"RepeatedJsonKey", "{\n\"schema\": 1,\n\"notes\": \"a\",\n\"notes\": \"b\"\n}\n",
     DeviceDbErrc::duplicate, "t.json:4: duplicate key \"notes\" (first at line 3)"},
    {"MalformedHex",
     doc_with(
         kFamily,
         "\"devices\": [\n{\"pci_id\": \"0x56g0\", \"product\": \"A\", \"family\": \"tgllp\"}]"),
     DeviceDbErrc::bad_hex,
     "t.json:7: malformed hex id \"0x56g0\" for \"pci_id\" (expected 0x followed by 1 to 8 hex "
     "digits)"},
    {"MalformedIpVersion", family_with("12.0.0", "12.0"), DeviceDbErrc::bad_version,
     "t.json:4: malformed ip_version \"12.0\" (expected major.minor.revision)"},
    {"MissingKeyAtTheObjectsLine",
     doc_with(kFamily, "\"devices\": [\n\n  {\"pci_id\": \"0x9a49\",\n   \"family\": \"tgllp\"}]"),
     DeviceDbErrc::missing_key, "t.json:8: device lacks required key \"product\""},
    {"WrongType", family_with("true", "\"yes\""), DeviceDbErrc::wrong_type,
     "t.json:4: \"aot_default\" in family must be true or false"},
    {"PreferIlNotABoolean",
     family_with("\"aot_default\": true", "\"aot_default\": true, \"prefer_il\": 1"),
     DeviceDbErrc::wrong_type, "t.json:4: \"prefer_il\" in family must be true or false"},
    {"ValueOutsideItsSet", family_with("\"integrated\"", "\"embedded\""), DeviceDbErrc::bad_value,
     "t.json:4: \"kind\" must be one of integrated, discrete, not \"embedded\""},
    // A number is followed by a newline that the lexer reads ahead: still line 2.
    {"UnsupportedSchemaOnItsLine", "{\n\"schema\": 2\n}\n", DeviceDbErrc::bad_value,
     "t.json:2: unsupported schema 2 (this kcache reads 1)"},
};

TEST_P(DataFileProblem, IsTheOnlyOneAndSaysWhereItIs) {
    const test::OneProblem& c = GetParam();
    const Diagnostic d = only_problem(c.text);
    EXPECT_STREQ(to_string(d.code), to_string(c.code));
    EXPECT_EQ(d.to_string(), c.says);
}
INSTANTIATE_TEST_SUITE_P(DeviceDbLoader, DataFileProblem, ::testing::ValuesIn(kOneProblem),
                         test::one_problem_name);

TEST(DeviceDb, LoaderAcceptsAMinimalFile) {
    auto r = parse_data_file(doc_with(kFamily, R"("devices": [{"pci_id": "0x9a49", )"
                                               R"("product": "Iris Xe", "family": "tgllp"}])"),
                             "t.json");
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_EQ(r->devices.size(), 1u);
    EXPECT_EQ(r->devices[0].pci_id, 0x9a49u);
    EXPECT_EQ(r->devices[0].vendor_id, 0x8086u);
    EXPECT_EQ(r->devices[0].origin.line, 6);
    EXPECT_EQ(r->families[0].ip_version.encode(), 0x03000000u);
}

TEST(DeviceDb, LoaderReportsJsonSyntaxAtItsLine) {
    // Line 3 lacks the comma between members.
    Diagnostic d = only_problem("{\n  \"schema\": 1,\n  \"notes\": \"x\"\n  \"vendors\": []\n}\n");
    EXPECT_EQ(d.code, DeviceDbErrc::json_syntax);
    EXPECT_EQ(d.line, 4);
    EXPECT_EQ(d.to_string().rfind("t.json:4: JSON syntax error: ", 0), 0u) << d.to_string();
}

// A repeated member is dropped whole, and repeats inside it are reported
// too: each dropped value keeps its own storage while the parser is inside
// it (found by fuzz_device_db under ASan: a use after free).
TEST(DeviceDb, LoaderReportsRepeatsInsideARepeatedMember) {
    const std::string text =
        "{\n\"schema\": 1,\n\"vendors\": [],\n"
        "\"vendors\": [{\"id\": \"0x1\",\n"
        "  \"x\": {\"a\": 1,\n\"a\": [{\"b\": 1,\n\"b\": {}}]}}]\n}\n";
    auto r = parse_data_file(text, "t.json");
    ASSERT_FALSE(r.ok());
    std::vector<std::string> said;
    for (const Diagnostic& d : r.error().diagnostics) {
        EXPECT_EQ(d.code, DeviceDbErrc::duplicate) << d.to_string();
        said.push_back(d.to_string());
    }
    ASSERT_EQ(said.size(), 3u) << r.error().message;
    EXPECT_EQ(said[0].rfind("t.json:4: duplicate key \"vendors\" (first at line 3)", 0), 0u)
        << said[0];
    EXPECT_EQ(said[1].rfind("t.json:6: duplicate key \"a\"", 0), 0u) << said[1];
    EXPECT_EQ(said[2].rfind("t.json:7: duplicate key \"b\"", 0), 0u) << said[2];
}

TEST(DeviceDb, LoaderRejectsHexWithoutPrefixOrTooLong) {
    for (const char* bad : {"56a0", "0x", "0x123456789", "0x-1", " 0x1"}) {
        Diagnostic d = only_problem(doc_with(
            kFamily, std::string("\"vendors\": [{\"id\": \"") + bad + "\", \"name\": \"v\"}]"));
        EXPECT_EQ(d.code, DeviceDbErrc::bad_hex) << bad;
        EXPECT_EQ(d.line, 6) << bad;
    }
}

TEST(DeviceDb, LoaderReportsEveryProblemOfAFile) {
    const std::string text =
        doc_with(kFamily,
                 "\"devices\": [\n"
                 "{\"pci_id\": \"0xZZ\", \"product\": \"a\", \"family\": \"x\"},\n"
                 "{\"pci_id\": \"0x1\", \"product\": 5, \"family\": \"x\"}\n"
                 "]");
    auto r = parse_data_file(text, "t.json");
    ASSERT_FALSE(r.ok());
    ASSERT_EQ(r.error().diagnostics.size(), 2u) << r.error().message;
    EXPECT_EQ(r.error().diagnostics[0].line, 7);
    EXPECT_EQ(r.error().diagnostics[1].line, 8);
    EXPECT_EQ(r.error().message,
              r.error().diagnostics[0].to_string() + "\n" + r.error().diagnostics[1].to_string());
}

class DeviceDbFiles : public kcache::test::TempDirTest {};

TEST_F(DeviceDbFiles, ReadDataFileNamesThePathInMessages) {
    const auto path = dir() / "bad.json";
    std::ofstream(path) << "{\n\"schema\": 1,\n\"bogus\": 1\n}\n";
    auto r = read_data_file(path);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, path.string() + ":3: unknown key \"bogus\" in data file");
}

TEST_F(DeviceDbFiles, ReadDataFileReportsMissingFilesAndDirectoriesAsIo) {
    for (const auto& path : {dir() / "absent.json", dir()}) {
        auto r = read_data_file(path);
        ASSERT_FALSE(r.ok()) << path;
        EXPECT_EQ(r.error().code, DeviceDbErrc::io) << path;
        EXPECT_NE(r.error().message.find("cannot read device data file " + path.string()),
                  std::string::npos)
            << r.error().message;
    }
}

// The records generated at build time are those the data files parse to
// today, field by field and with their origins.
TEST(DeviceDb, BuiltinRecordsAreTheDataFilesParsed) {
    auto files = builtin_data_files();
    ASSERT_TRUE(files.ok()) << files.error().message;
    const char* names[] = {"devices.json", "quirks.json"};
    ASSERT_EQ(files->size(), std::size(names));
    for (std::size_t i = 0; i < files->size(); ++i) {
        const auto path = std::filesystem::path(KCACHE_DEVICE_DB_DATA_DIR) / names[i];
        auto text = read_regular_file(path, 16u << 20);
        ASSERT_TRUE(text.ok()) << path;
        auto parsed = parse_data_file(*text, std::string("device_db/data/") + names[i]);
        ASSERT_TRUE(parsed.ok()) << parsed.error().message;
        const DataFile& built = (*files)[i];
        EXPECT_EQ(built.file, parsed->file);
        EXPECT_EQ(built.vendors, parsed->vendors) << names[i];
        EXPECT_EQ(built.families, parsed->families) << names[i];
        ASSERT_EQ(built.devices.size(), parsed->devices.size()) << names[i];
        for (std::size_t d = 0; d < built.devices.size(); ++d) {
            EXPECT_EQ(built.devices[d], parsed->devices[d])
                << names[i] << " device " << d << " line " << parsed->devices[d].origin.line;
        }
        EXPECT_EQ(built.quirks, parsed->quirks) << names[i];
    }
}

TEST(DeviceDb, BuiltinDataLoadsCleanly) {
    auto files = builtin_data_files();
    ASSERT_TRUE(files.ok()) << files.error().message;
    ASSERT_EQ(files->size(), 2u);
    EXPECT_EQ((*files)[0].file, "device_db/data/devices.json");
    EXPECT_GT((*files)[0].devices.size(), 100u);
    EXPECT_FALSE((*files)[1].quirks.empty());
}

}  // namespace
}  // namespace kcache::device_db
