// What libcurl 7.88 itself costs per kept-alive request for each choice ServerTrust's session
// makes, without any Swift: the floor an async client over this libcurl cannot go below.
// Built and run by curl-floor.sh under callgrind.
//
//   curl-floor URL CACERT REQUESTS [FLAGS]
//
// FLAGS, cumulative letters (none: a curl_easy_perform loop, like libcurl-bench keepalive):
//   m  the multi interface: add, perform/poll until done, remove — per request, as MultiLoop does
//   u  CURLOPT_USERAGENT (ServerTrust's default sends one; libcurl-bench sends none)
//   U  the same User-Agent as a CURLOPT_HTTPHEADER line instead
//   h  a header callback (returning at once)
//   s  a share handle for TLS sessions
//   l  CURLOPT_MAXLIFETIME_CONN
//   p  CURLOPT_PREREQFUNCTION (returning OK at once)
//   o  the options ServerTrust sets again before every request (EasyHandleConfigurator.prepare)
//   a  CURLOPT_ACCEPT_ENCODING NULL and CURLOPT_HTTP_CONTENT_DECODING 0
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t discard(char *data, size_t size, size_t count, void *user) { (void)data; (void)user; return size * count; }
static int admit(void *user, char *a, char *b, int c, int d) { (void)user; (void)a; (void)b; (void)c; (void)d; return CURL_PREREQFUNC_OK; }

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: curl-floor URL CACERT REQUESTS [FLAGS]\n"); return 2; }
    const char *url = argv[1], *cacert = argv[2], *flags = argc > 4 ? argv[4] : "";
    long requests = atol(argv[3]);
#define FLAG(c) (strchr(flags, c) != NULL)
    curl_global_init(CURL_GLOBAL_DEFAULT);
    CURL *easy = curl_easy_init();
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(easy, CURLOPT_CAINFO, cacert);
    curl_easy_setopt(easy, CURLOPT_CAPATH, NULL);
    curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
    struct curl_slist *headers = NULL;
    if (FLAG('u')) curl_easy_setopt(easy, CURLOPT_USERAGENT, "ServerTrust/1 libcurl/7.88.1");
    if (FLAG('U')) {
        headers = curl_slist_append(NULL, "User-Agent: ServerTrust/1 libcurl/7.88.1");
        curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
    }
    if (FLAG('h')) curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, discard);
    if (FLAG('p')) curl_easy_setopt(easy, CURLOPT_PREREQFUNCTION, admit);
    if (FLAG('l')) curl_easy_setopt(easy, CURLOPT_MAXLIFETIME_CONN, 300L);
    if (FLAG('s')) {
        CURLSH *share = curl_share_init();
        curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
        curl_easy_setopt(easy, CURLOPT_SHARE, share);
    }
    CURLM *multi = FLAG('m') ? curl_multi_init() : NULL;
    if (multi) {
        curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, 32L);
        curl_multi_setopt(multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
    }
    for (long index = 0; index < requests; index++) {
        if (FLAG('o')) {
            curl_easy_setopt(easy, CURLOPT_URL, url);
            curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, 0L);
            curl_easy_setopt(easy, CURLOPT_HTTPGET, 1L);
            curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, NULL);
            curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
            curl_easy_setopt(easy, CURLOPT_HEADERDATA, NULL);
            curl_easy_setopt(easy, CURLOPT_READDATA, NULL);
            curl_easy_setopt(easy, CURLOPT_WRITEDATA, NULL);
            curl_easy_setopt(easy, CURLOPT_SSL_CTX_DATA, NULL);
            curl_easy_setopt(easy, CURLOPT_PREREQDATA, NULL);
            curl_easy_setopt(easy, CURLOPT_FRESH_CONNECT, 0L);
            curl_easy_setopt(easy, CURLOPT_FORBID_REUSE, 0L);
            curl_easy_setopt(easy, CURLOPT_SSL_SESSIONID_CACHE, 1L);
        }
        if (FLAG('a')) {
            curl_easy_setopt(easy, CURLOPT_ACCEPT_ENCODING, NULL);
            curl_easy_setopt(easy, CURLOPT_HTTP_CONTENT_DECODING, 0L);
        }
        CURLcode code = CURLE_OK;
        if (multi) {
            curl_multi_add_handle(multi, easy);
            int running = 1;
            while (running) {
                curl_multi_perform(multi, &running);
                int left;
                CURLMsg *message;
                while ((message = curl_multi_info_read(multi, &left)))
                    if (message->msg == CURLMSG_DONE) code = message->data.result;
                if (running) curl_multi_poll(multi, NULL, 0, 1000, NULL);
            }
            curl_multi_remove_handle(multi, easy);
        } else {
            code = curl_easy_perform(easy);
        }
        if (code != CURLE_OK) { fprintf(stderr, "curl-floor: %s\n", curl_easy_strerror(code)); return 1; }
    }
    printf("requests %ld\n", requests);
    return 0;
}
