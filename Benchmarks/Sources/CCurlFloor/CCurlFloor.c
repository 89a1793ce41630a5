#include "CCurlFloor.h"
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

struct buffer { unsigned char *bytes; size_t length, capacity; };

/// One easy handle and what its transfer received.
struct slot {
    CURL *easy;
    struct buffer body, head;
};

struct curl_floor {
    CURLM *multi;
    struct curl_slist *headers;
    int slots;
    struct slot *slot;
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
static size_t receive(char *data, size_t size, size_t count, void *user) { return append(&((struct slot *)user)->body, data, size * count); }
static size_t header(char *data, size_t size, size_t count, void *user) { return append(&((struct slot *)user)->head, data, size * count); }

curl_floor *curl_floor_new(const char *cacert, int slots, int http2, long connections) {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (slots < 1) return NULL;
    curl_floor *engine = calloc(1, sizeof *engine);
    if (!engine) return NULL;
    engine->slots = slots;
    engine->slot = calloc((size_t)slots, sizeof *engine->slot);
    engine->multi = curl_multi_init();
    if (!engine->slot || !engine->multi) return NULL;
    // The session's multi options (MultiLoop.init): its per-host limit (1 for HTTP/2, as the
    // benchmark configures it), a cache of max(32, the limit) connections, multiplexing.
    long perHost = http2 ? 1L : connections;
    curl_multi_setopt(engine->multi, CURLMOPT_MAX_HOST_CONNECTIONS, perHost);
    curl_multi_setopt(engine->multi, CURLMOPT_MAXCONNECTS, perHost > 32 ? perHost : 32L);
    curl_multi_setopt(engine->multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
    engine->headers = curl_slist_append(NULL, "User-Agent: ServerTrust/1 libcurl/7.88.1");
    CURLSH *share = curl_share_init();
    curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    for (int index = 0; index < slots; index++) {
        struct slot *slot = &engine->slot[index];
        CURL *easy = slot->easy = curl_easy_init();
        if (!easy) return NULL;
        curl_easy_setopt(easy, CURLOPT_PRIVATE, (void *)(ptrdiff_t)index);
        curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, receive);
        curl_easy_setopt(easy, CURLOPT_WRITEDATA, slot);
        curl_easy_setopt(easy, CURLOPT_CAINFO, cacert);
        curl_easy_setopt(easy, CURLOPT_CAPATH, NULL);
        curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, http2 ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_1_1);
        curl_easy_setopt(easy, CURLOPT_PIPEWAIT, 1L);
        curl_easy_setopt(easy, CURLOPT_PROXY, "");
        curl_easy_setopt(easy, CURLOPT_NOPROXY, "");
        curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, header);
        curl_easy_setopt(easy, CURLOPT_HEADERDATA, slot);
        curl_easy_setopt(easy, CURLOPT_PREREQFUNCTION, admit);
        curl_easy_setopt(easy, CURLOPT_MAXLIFETIME_CONN, 300L);
        curl_easy_setopt(easy, CURLOPT_SHARE, share);
    }
    return engine;
}

int curl_floor_start(curl_floor *engine, int slot, const char *url) {
    if (slot < 0 || slot >= engine->slots) return -1;
    struct slot *transfer = &engine->slot[slot];
    CURL *easy = transfer->easy;
    transfer->body.length = 0;
    transfer->head.length = 0;
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

void curl_floor_perform(curl_floor *engine) {
    int running = 0;
    curl_multi_perform(engine->multi, &running);
}

int curl_floor_next(curl_floor *engine, int *slot, int *code, long *status) {
    int left = 0;
    CURLMsg *message;
    while ((message = curl_multi_info_read(engine->multi, &left))) {
        if (message->msg != CURLMSG_DONE) continue;
        CURL *easy = message->easy_handle;
        void *index = NULL;
        *code = (int)message->data.result;
        curl_easy_getinfo(easy, CURLINFO_PRIVATE, &index);
        curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, status);
        curl_multi_remove_handle(engine->multi, easy);
        *slot = (int)(ptrdiff_t)index;
        return 1;
    }
    return 0;
}

void curl_floor_poll(curl_floor *engine) { curl_multi_poll(engine->multi, NULL, 0, 1000, NULL); }
void curl_floor_wakeup(curl_floor *engine) { curl_multi_wakeup(engine->multi); }

const unsigned char *curl_floor_body(curl_floor *engine, int slot, size_t *length) {
    *length = engine->slot[slot].body.length;
    return engine->slot[slot].body.bytes;
}

const unsigned char *curl_floor_head(curl_floor *engine, int slot, size_t *length) {
    *length = engine->slot[slot].head.length;
    return engine->slot[slot].head.bytes;
}
