#include "CServerTrustCurlShims.h"

CURLcode CServerTrustCurlShims_easy_setopt_long(CURL *handle, CURLoption option, long value) { return curl_easy_setopt(handle, option, value); }
CURLcode CServerTrustCurlShims_easy_setopt_string(CURL *handle, CURLoption option, const char *value) { return curl_easy_setopt(handle, option, value); }
CURLcode CServerTrustCurlShims_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) { return curl_easy_setopt(handle, option, value); }
CURLcode CServerTrustCurlShims_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) { return curl_easy_setopt(handle, option, value); }
CURLcode CServerTrustCurlShims_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) { return curl_easy_setopt(handle, option, value); }
CURLcode CServerTrustCurlShims_easy_setopt_write_callback(CURL *handle, CURLoption option, size_t (*cb)(char *, size_t, size_t, void *)) { return curl_easy_setopt(handle, option, cb); }
CURLcode CServerTrustCurlShims_easy_setopt_ssl_ctx_callback(CURL *handle, CURLcode (*cb)(CURL *, void *, void *)) { return curl_easy_setopt(handle, CURLOPT_SSL_CTX_FUNCTION, cb); }
CURLcode CServerTrustCurlShims_easy_setopt_prereq_callback(CURL *handle, int (*cb)(void *, char *, char *, int, int)) { return curl_easy_setopt(handle, CURLOPT_PREREQFUNCTION, cb); }
CURLcode CServerTrustCurlShims_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) { return curl_easy_getinfo(handle, info, value); }
CURLcode CServerTrustCurlShims_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) { return curl_easy_getinfo(handle, info, value); }
CURLcode CServerTrustCurlShims_easy_getinfo_private(CURL *handle, void **value) {
    char *pointer = NULL;
    CURLcode code = curl_easy_getinfo(handle, CURLINFO_PRIVATE, &pointer);
    *value = code == CURLE_OK ? pointer : NULL;
    return code;
}
CURLcode CServerTrustCurlShims_easy_getinfo_tls_ssl_ptr(CURL *handle, void **ssl) {
    struct curl_tlssessioninfo *info = NULL;
    CURLcode code = curl_easy_getinfo(handle, CURLINFO_TLS_SSL_PTR, &info);
    if (code != CURLE_OK || info == NULL || info->backend != CURLSSLBACKEND_OPENSSL) { *ssl = NULL; return code; }
    *ssl = info->internals;
    return CURLE_OK;
}
CURLMcode CServerTrustCurlShims_multi_setopt_long(CURLM *multi, CURLMoption option, long value) { return curl_multi_setopt(multi, option, value); }
CURLSHcode CServerTrustCurlShims_share_setopt_long(CURLSH *share, CURLSHoption option, long value) { return curl_share_setopt(share, option, value); }
curl_version_info_data *CServerTrustCurlShims_version_info(void) { return curl_version_info(CURLVERSION_NOW); }
