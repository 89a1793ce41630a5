#include "CCurlFloor.h"
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

struct curl_floor {
    CURLM *multi;
    CURL *easy;
    struct curl_slist *headers;
    struct buffer { unsigned char *bytes; size_t length, capacity; } body, head;
};

static int admit(void *user, char *a, char *b, int c, int d) { (void)user; (void)a; (void)b; (void)c; (void)d; return CURL_PREREQFUNC_OK; }

static size_t append(struct buffer *buffer, const char *data, size_t bytes) {
    if (buffer->length + bytes > buffer->capacity) {
        size_t capacity = buffer->capacity ? buffer->capacity * 2 : 4096;
        while (capacity < buffer->length + bytes) capacity *= 2;
        unsigned char *grown = realloc(buffer->bytes, capacity);
        if (!grown) return 0;
        buffer->bytes = grown;
        buffer->capacity = capacity;
    }
    memcpy(buffer->bytes + buffer->length, data, bytes);
    buffer->length += bytes;
    return bytes;
}

/// The body, kept; and every header line, kept as received (a client returns both).
static size_t receive(char *data, size_t size, size_t count, void *user) { return append(&((curl_floor *)user)->body, data, size * count); }
static size_t header(char *data, size_t size, size_t count, void *user) { return append(&((curl_floor *)user)->head, data, size * count); }

curl_floor *curl_floor_new(const char *cacert) {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    curl_floor *engine = calloc(1, sizeof *engine);
    if (!engine) return NULL;
    engine->multi = curl_multi_init();
    engine->easy = curl_easy_init();
    if (!engine->multi || !engine->easy) return NULL;
    curl_multi_setopt(engine->multi, CURLMOPT_MAXCONNECTS, 32L);
    curl_multi_setopt(engine->multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
    CURL *easy = engine->easy;
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, receive);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, engine);
    curl_easy_setopt(easy, CURLOPT_CAINFO, cacert);
    curl_easy_setopt(easy, CURLOPT_CAPATH, NULL);
    curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(easy, CURLOPT_PROXY, "");
    curl_easy_setopt(easy, CURLOPT_NOPROXY, "");
    engine->headers = curl_slist_append(NULL, "User-Agent: ServerTrust/1 libcurl/7.88.1");
    curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, header);
    curl_easy_setopt(easy, CURLOPT_HEADERDATA, engine);
    curl_easy_setopt(easy, CURLOPT_PREREQFUNCTION, admit);
    curl_easy_setopt(easy, CURLOPT_MAXLIFETIME_CONN, 300L);
    CURLSH *share = curl_share_init();
    curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    curl_easy_setopt(easy, CURLOPT_SHARE, share);
    return engine;
}

int curl_floor_start(curl_floor *engine, const char *url) {
    CURL *easy = engine->easy;
    engine->body.length = 0;
    engine->head.length = 0;
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, 0L);
    curl_easy_setopt(easy, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, NULL);
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, engine->headers);
    curl_easy_setopt(easy, CURLOPT_ACCEPT_ENCODING, NULL);
    curl_easy_setopt(easy, CURLOPT_HTTP_CONTENT_DECODING, 0L);
    curl_easy_setopt(easy, CURLOPT_FRESH_CONNECT, 0L);
    curl_easy_setopt(easy, CURLOPT_FORBID_REUSE, 0L);
    curl_easy_setopt(easy, CURLOPT_SSL_SESSIONID_CACHE, 1L);
    return curl_multi_add_handle(engine->multi, easy) == CURLM_OK ? 0 : -1;
}

int curl_floor_perform(curl_floor *engine, int *code, long *status) {
    int running = 0, left = 0, done = 0;
    curl_multi_perform(engine->multi, &running);
    CURLMsg *message;
    while ((message = curl_multi_info_read(engine->multi, &left))) {
        if (message->msg != CURLMSG_DONE) continue;
        *code = (int)message->data.result;
        curl_easy_getinfo(message->easy_handle, CURLINFO_RESPONSE_CODE, status);
        curl_multi_remove_handle(engine->multi, message->easy_handle);
        done = 1;
    }
    return done;
}

void curl_floor_poll(curl_floor *engine) { curl_multi_poll(engine->multi, NULL, 0, 1000, NULL); }
void curl_floor_wakeup(curl_floor *engine) { curl_multi_wakeup(engine->multi); }

const unsigned char *curl_floor_body(curl_floor *engine, size_t *length) {
    *length = engine->body.length;
    return engine->body.bytes;
}

const unsigned char *curl_floor_head(curl_floor *engine, size_t *length) {
    *length = engine->head.length;
    return engine->head.bytes;
}
