// One libcurl easy handle in a multi handle with the options ServerTrust's session sets
// (scripts/curl-floor.c's full set: the User-Agent as a header line, a header callback that keeps
// the lines, a share
// handle for TLS sessions, CURLOPT_MAXLIFETIME_CONN, CURLOPT_PREREQFUNCTION, the per-request
// options, no content decoding), for async-floor: variadic curl_easy_setopt cannot be called
// from Swift, so the calls are here. No ServerTrust code.
#pragma once
#include <stddef.h>

typedef struct curl_floor curl_floor;

/// A new engine trusting CACERT; NULL on failure.
curl_floor *curl_floor_new(const char *cacert);
/// Sets the per-request options and adds the handle for URL (copied by libcurl). 0 on success.
int curl_floor_start(curl_floor *engine, const char *url);
/// One turn: curl_multi_perform, then the finished transfer's result. Returns 1 when the
/// transfer ended (CODE and STATUS set, handle removed), 0 while it runs.
int curl_floor_perform(curl_floor *engine, int *code, long *status);
/// Waits for socket activity or a wake-up, at most a second (curl_multi_poll).
void curl_floor_poll(curl_floor *engine);
/// Ends a poll from another thread (curl_multi_wakeup).
void curl_floor_wakeup(curl_floor *engine);
/// The body received by the last transfer; valid until the next start.
const unsigned char *curl_floor_body(curl_floor *engine, size_t *length);
/// The header lines received by the last transfer, as curl delivered them; valid until the next start.
const unsigned char *curl_floor_head(curl_floor *engine, size_t *length);
