// The S3 backend's signing against AWS's published Signature Version 4
// examples: requests set up by apply_sigv4() (the backend's only way into
// libcurl's signer) must carry, byte for byte, the Authorization header AWS
// documents. The vectors' data (credentials, dates, requests, signatures)
// are from AWS's documentation: the Signature Version 4 test suite
// ("get-vanilla", "post-vanilla", "post-header-key-sort",
// "post-sts-header-before") and the S3 API reference's examples of
// header-based authentication (GET Object with a Range, PUT Object).
//
// Each request goes to a loopback nginx whatever its host name
// (CURLOPT_CONNECT_TO), so libcurl signs the vector's Host; the header
// sent is read back from libcurl's debug callback.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "http/http.hpp"
#include "remote_support.hpp"

namespace kcache::test {
namespace {

struct Vector {
    const char* name;
    const char* method;
    const char* url;
    std::vector<std::string> headers;  // the request's own, x-amz-date among them
    std::string body;
    remote::SigV4 sig;
    const char* authorization;  // as published
};

constexpr const char* kSuiteKey = "AKIDEXAMPLE";
constexpr const char* kSuiteSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
constexpr const char* kS3Key = "AKIAIOSFODNN7EXAMPLE";
constexpr const char* kS3Secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
constexpr const char* kEmptyHash =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr const char* kSuiteToken =
    "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSP"
    "fIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT"
    "7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm"
    "8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA==";

std::vector<Vector> vectors() {
    const remote::SigV4 suite{"us-east-1", "service", kSuiteKey, kSuiteSecret};
    const remote::SigV4 s3{"us-east-1", "s3", kS3Key, kS3Secret};
    const std::string suite_scope =
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/"
        "service/aws4_request, ";
    static std::vector<std::string> auth;  // the expected headers, kept alive
    auth = {
        suite_scope +
            "SignedHeaders=host;x-amz-date, Signature="
            "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
        suite_scope +
            "SignedHeaders=host;x-amz-date, Signature="
            "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b",
        suite_scope +
            "SignedHeaders=host;my-header1;x-amz-date, Signature="
            "c5410059b04c1ee005303aed430f6e6645f61f4dc9e1461ec8f8916fdf18852c",
        suite_scope +
            "SignedHeaders=host;x-amz-date;x-amz-security-token, Signature="
            "85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead",
        "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
        "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
        "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41",
        "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
        "SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class, "
        "Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd",
    };
    const std::string suite_date = "X-Amz-Date: 20150830T123600Z";
    const std::string s3_date = "x-amz-date: 20130524T000000Z";
    return {
        {"get-vanilla",
         "GET",
         "http://example.amazonaws.com/",
         {suite_date},
         "",
         suite,
         auth[0].c_str()},
        {"post-vanilla",
         "POST",
         "http://example.amazonaws.com/",
         {suite_date},
         "",
         suite,
         auth[1].c_str()},
        {"post-header-key-sort",
         "POST",
         "http://example.amazonaws.com/",
         {"My-Header1: value1", suite_date},
         "",
         suite,
         auth[2].c_str()},
        {"post-sts-header-before",
         "POST",
         "http://example.amazonaws.com/",
         {suite_date, std::string("X-Amz-Security-Token: ") + kSuiteToken},
         "",
         suite,
         auth[3].c_str()},
        {"s3 GET Object",
         "GET",
         "http://examplebucket.s3.amazonaws.com/test.txt",
         {"Range: bytes=0-9", std::string("x-amz-content-sha256: ") + kEmptyHash, s3_date},
         "",
         s3,
         auth[4].c_str()},
        {"s3 PUT Object",
         "PUT",
         "http://examplebucket.s3.amazonaws.com/test%24file.text",
         {"Date: Fri, 24 May 2013 00:00:00 GMT",
          "x-amz-content-sha256: 44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072",
          s3_date, "x-amz-storage-class: REDUCED_REDUNDANCY"},
         "Welcome to Amazon S3.",
         s3,
         auth[5].c_str()},
    };
}

// Collects the request headers libcurl sends.
int on_debug(CURL*, curl_infotype type, char* data, std::size_t size, void* user) {
    if (type == CURLINFO_HEADER_OUT) {
        static_cast<std::string*>(user)->append(data, size);
    }
    return 0;
}

// The Authorization header libcurl sends for `v`, the request going to
// loopback `port`; "" when none was sent.
std::string authorization_sent(const Vector& v, int port) {
    remote::EasyHandle h(curl_easy_init());
    CURL* c = h.get();
    std::string sent;
    curl_slist* list = nullptr;
    for (const std::string& header : v.headers) {
        list = curl_slist_append(list, header.c_str());
    }
    const remote::Slist headers(list);
    curl_slist* to = curl_slist_append(nullptr, ("::127.0.0.1:" + std::to_string(port)).c_str());
    const remote::Slist connect_to(to);
    curl_easy_setopt(c, CURLOPT_URL, v.url);
    curl_easy_setopt(c, CURLOPT_CONNECT_TO, connect_to.get());
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, v.method);
    if (std::string(v.method) != "GET") {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, v.body.data());
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(v.body.size()));
    }
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 5000L);
    curl_easy_setopt(c, CURLOPT_VERBOSE, 1L);
    curl_easy_setopt(c, CURLOPT_DEBUGFUNCTION, on_debug);
    curl_easy_setopt(c, CURLOPT_DEBUGDATA, &sent);
    curl_easy_setopt(
        c, CURLOPT_WRITEFUNCTION, +[](char*, std::size_t s, std::size_t n, void*) {
            return s * n;  // the body nginx answers is not looked at
        });
    remote::apply_sigv4(c, v.sig);
    EXPECT_EQ(curl_easy_perform(c), CURLE_OK) << v.name;
    const std::string key = "Authorization: ";
    const auto at = sent.find(key);
    return at == std::string::npos
               ? ""
               : sent.substr(at + key.size(), sent.find("\r\n", at) - at - key.size());
}

class S3SigV4 : public TempDirTest {};

TEST_F(S3SigV4, SignsThePublishedExamplesAsAwsDocumentsThem) {
    auto server = start_nginx(dir() / "nginx");
    ASSERT_TRUE(server);
    const int port = std::stoi(server->url().substr(server->url().rfind(':') + 1));
    for (const Vector& v : vectors()) {
        EXPECT_EQ(authorization_sent(v, port), v.authorization) << v.name;
    }
}

TEST_F(S3SigV4, AnotherSecretGivesAnotherSignature) {
    auto server = start_nginx(dir() / "nginx");
    ASSERT_TRUE(server);
    const int port = std::stoi(server->url().substr(server->url().rfind(':') + 1));
    Vector v = vectors().front();
    v.sig.secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEZ";
    const std::string sent = authorization_sent(v, port);
    ASSERT_FALSE(sent.empty());
    EXPECT_NE(sent, v.authorization);
    EXPECT_EQ(sent.find(v.sig.secret), std::string::npos);  // the secret never goes out
}

}  // namespace
}  // namespace kcache::test
