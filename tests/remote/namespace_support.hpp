#pragma once
// Shared by the namespace and gc tests: clients of a namespace that sign
// with a key of their own and trust the keys named for each namespace, and
// object files made old on a server's disk.

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "kcache/remote/namespaces.hpp"
#include "kcache/sign/signature.hpp"
#include "remote_support.hpp"

namespace kcache::test {

// Namespace `name` trusting `keys` (their public halves) and no other.
inline remote::Namespace trusting(const std::string& name,
                                  const std::vector<store::SecretKey>& keys) {
    remote::Namespace n{name, {}};
    for (const store::SecretKey& k : keys) {
        n.trusted_keys.add({k.public_key(), "test:" + name});
    }
    return n;
}

// test_settings(`url`, `state_dir`) signing with `key` (written into
// `state_dir`), trusting no key globally, reading `spaces` (the first its own).
inline remote::Settings namespace_settings(const std::string& url,
                                           const std::filesystem::path& state_dir,
                                           const store::SecretKey& key,
                                           std::vector<remote::Namespace> spaces) {
    remote::Settings s = test_settings(url, state_dir);
    const auto file = state_dir / "namespace-writer.key";
    EXPECT_TRUE(
        store::write_text_file(file, store::format_secret_key(key), 0600, store::Replace::yes));
    s.signing_key_file = file;
    s.trusted_keys = {};
    s.namespaces = std::move(spaces);
    return s;
}

// The relative path of entry `n`'s object in namespace `name`.
inline std::string object_in(const std::string& name, int n) {
    return remote::object_path_in(name, store::make_key(made_up_fields(n)));
}

// Sets the modification time of `file` to `age` ago.
inline void make_old(const std::filesystem::path& file, std::chrono::hours age) {
    std::error_code ec;
    const auto when = std::filesystem::file_time_type::clock::now() - age;
    std::filesystem::last_write_time(file, when, ec);
    EXPECT_FALSE(ec) << file << ": " << ec.message();
}

}  // namespace kcache::test
