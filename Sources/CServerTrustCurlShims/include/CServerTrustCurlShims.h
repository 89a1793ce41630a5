#ifndef CSERVERTRUST_CURL_SHIMS_H
#define CSERVERTRUST_CURL_SHIMS_H

// Typed wrappers for libcurl's variadic setopt/getinfo functions, which Swift cannot call.

#include <curl/curl.h>

CURLcode CServerTrustCurlShims_easy_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode CServerTrustCurlShims_easy_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode CServerTrustCurlShims_easy_setopt_pointer(CURL *handle, CURLoption option, void *value);
CURLcode CServerTrustCurlShims_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value);
CURLcode CServerTrustCurlShims_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value);
CURLcode CServerTrustCurlShims_easy_setopt_write_callback(CURL *handle, CURLoption option, size_t (*cb)(char *, size_t, size_t, void *));
CURLcode CServerTrustCurlShims_easy_setopt_ssl_ctx_callback(CURL *handle, CURLcode (*cb)(CURL *, void *, void *));
CURLcode CServerTrustCurlShims_easy_setopt_prereq_callback(CURL *handle, int (*cb)(void *, char *, char *, int, int));
CURLcode CServerTrustCurlShims_easy_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode CServerTrustCurlShims_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value);
CURLcode CServerTrustCurlShims_easy_getinfo_tls_ssl_ptr(CURL *handle, void **ssl);
/// CURLINFO_PRIVATE: the pointer set with CURLOPT_PRIVATE (NULL when none was).
CURLcode CServerTrustCurlShims_easy_getinfo_private(CURL *handle, void **value);
CURLMcode CServerTrustCurlShims_multi_setopt_long(CURLM *multi, CURLMoption option, long value);
CURLSHcode CServerTrustCurlShims_share_setopt_long(CURLSH *share, CURLSHoption option, long value);

curl_version_info_data *CServerTrustCurlShims_version_info(void);

#endif
