// libcurl easy handles in one multi handle with the options ServerTrust's session sets
// (scripts/curl-floor.c's full set: the User-Agent as a header line, a header callback that keeps
// the lines, a share handle for TLS sessions, CURLOPT_MAXLIFETIME_CONN, CURLOPT_PREREQFUNCTION,
// the per-request options, no content decoding; and the session's multi options: the per-host
// connection limit, a fixed connection cache, multiplexing, CURLOPT_PIPEWAIT), for async-floor:
// variadic curl_easy_setopt cannot be called from Swift, so the calls are here. No ServerTrust
// code. Each of the engine's SLOTS easy handles carries one transfer at a time, with its own
// buffers: one slot for sequential requests, one per request in flight otherwise.
#pragma once
#include <stddef.h>

typedef struct curl_floor curl_floor;

/// A new engine trusting CACERT, with SLOTS easy handles; HTTP2 non-zero prefers HTTP/2 over
/// TLS (one connection per host, as a session configured for it), otherwise HTTP/1.1 with at
/// most CONNECTIONS connections per host. NULL on failure.
curl_floor *curl_floor_new(const char *cacert, int slots, int http2, long connections);
/// Sets the per-request options of SLOT's handle and adds it for URL (copied by libcurl).
/// 0 on success.
int curl_floor_start(curl_floor *engine, int slot, const char *url);
/// One turn of the multi handle: curl_multi_perform.
void curl_floor_perform(curl_floor *engine);
/// The next finished transfer since the last turn: returns 1 with SLOT, CODE and STATUS set and
/// the handle removed; 0 when there is none.
int curl_floor_next(curl_floor *engine, int *slot, int *code, long *status);
/// Waits for socket activity or a wake-up, at most a second (curl_multi_poll).
void curl_floor_poll(curl_floor *engine);
/// Ends a poll from another thread (curl_multi_wakeup).
void curl_floor_wakeup(curl_floor *engine);
/// The body SLOT's last transfer received; valid until the slot's next start.
const unsigned char *curl_floor_body(curl_floor *engine, int slot, size_t *length);
/// The header lines SLOT's last transfer received, as curl delivered them; valid until the
/// slot's next start.
const unsigned char *curl_floor_head(curl_floor *engine, int slot, size_t *length);
