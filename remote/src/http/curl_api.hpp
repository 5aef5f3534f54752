#pragma once
// libcurl, loaded at the first use of the HTTP client rather than with
// libkcache: a process that never talks to an HTTP or S3 remote (an
// application under the OpenCL layer, or one whose remote is Redis) does not
// load libcurl and the libraries it pulls in, whose start-up costs a few
// milliseconds and leaves hundreds of free chunks in the heap of an
// application that loads libkcache mid-run (bench/layer/README.md). Internal.

#include <curl/curl.h>

#include <string>

namespace kcache::remote {

// The libcurl functions the HTTP client calls.
struct CurlApi {
    CURL* (*easy_init)();
    CURLcode (*easy_setopt)(CURL*, CURLoption, ...);
    CURLcode (*easy_perform)(CURL*);
    CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...);
    void (*easy_reset)(CURL*);
    void (*easy_cleanup)(CURL*);
    const char* (*easy_strerror)(CURLcode);
    curl_slist* (*slist_append)(curl_slist*, const char*);
    void (*slist_free_all)(curl_slist*);
};

// libcurl's functions, loaded and initialised (curl_global_init) once per
// process at the first call; nullptr when libcurl cannot be loaded, and then
// `why` (when given) says what failed.
const CurlApi* curl_api(std::string* why = nullptr);

}  // namespace kcache::remote
