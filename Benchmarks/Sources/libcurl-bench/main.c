// Raw libcurl: the baseline every ratio is measured against. No ServerTrust code; curl's own
// verification (VERIFYPEER + VERIFYHOST against --cacert, curl's CA cache on) or, with --pin,
// curl's CURLOPT_PINNEDPUBLICKEY on top of it.
//
//   libcurl-bench handshake|keepalive|multi|memory URL [options]
//     --cacert FILE      anchors (CURLOPT_CAINFO, CURLOPT_CAPATH unset); omitted: curl's
//                        built-in defaults (Debian: the system bundle and /etc/ssl/certs)
//     --pin sha256//B64  CURLOPT_PINNEDPUBLICKEY
//     --seconds S        measure for S seconds (after --warmup seconds of the same work)
//     --inflight N       multi: transfers in flight; --connections N: pool size; --http2
//     --counts A,B       memory: report RSS after A and after B sequential requests
//     --requests N       profiling: exactly N requests, untimed (sequential; multi: --inflight at a time)
//
// Prints `rate R` (requests per second) and `cpu_us C` (process CPU µs per request), or
// `rss_kb_after_N KB` / `peak_rss_kb_after_N KB`.
#include <curl/curl.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *cacert = NULL;
static const char *pin = NULL;
static double seconds = 2.0, warmup = 0.3;
static long inflight = 64, connections = 64;
static int http2 = 0;
static long counts[2] = {10000, 50000};
static long requests = 0;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/// User + system CPU time of the process so far, in microseconds.
static double cpu_us(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return (double)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6 + (double)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

static size_t discard(char *data, size_t size, size_t count, void *user) {
    (void)data;
    *(size_t *)user += size * count;
    return size * count;
}

static void fail(const char *what, const char *detail) {
    fprintf(stderr, "libcurl-bench: %s: %s\n", what, detail);
    exit(1);
}

static CURL *make_easy(const char *url, size_t *received) {
    CURL *easy = curl_easy_init();
    if (!easy) fail("curl_easy_init", "failed");
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, received);
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 2L);
    if (cacert) {
        curl_easy_setopt(easy, CURLOPT_CAINFO, cacert);
        curl_easy_setopt(easy, CURLOPT_CAPATH, NULL);
    }
    if (pin) curl_easy_setopt(easy, CURLOPT_PINNEDPUBLICKEY, pin);
    curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, http2 ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_1_1);
    if (http2) curl_easy_setopt(easy, CURLOPT_PIPEWAIT, 1L);
    return easy;
}

static void perform(CURL *easy) {
    CURLcode code = curl_easy_perform(easy);
    if (code != CURLE_OK) fail("transfer", curl_easy_strerror(code));
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200) fail("transfer", "status is not 200");
}

/// Sequential requests on one easy handle; a full handshake each when the server closes.
static void sequential(const char *url) {
    size_t received = 0;
    CURL *easy = make_easy(url, &received);
    double end = now() + warmup;
    while (now() < end) perform(easy);
    long done = 0;
    double cpu = cpu_us(), start = now();
    end = start + seconds;
    double t;
    while ((t = now()) < end) {
        perform(easy);
        done++;
    }
    printf("rate %.1f\n", (double)done / (t - start));
    printf("cpu_us %.2f\n", (cpu_us() - cpu) / (double)done);
    curl_easy_cleanup(easy);
}

static long rss_kb(const char *field) {
    FILE *file = fopen("/proc/self/status", "r");
    char line[256];
    long value = -1;
    size_t length = strlen(field);
    while (file && fgets(line, sizeof line, file)) {
        if (strncmp(line, field, length) == 0) value = strtol(line + length + 1, NULL, 10);
    }
    if (file) fclose(file);
    return value;
}

static void memory(const char *url) {
    size_t received = 0;
    CURL *easy = make_easy(url, &received);
    for (long i = 1; i <= counts[1]; i++) {
        perform(easy);
        if (i == counts[0] || i == counts[1]) {
            printf("peak_rss_kb_after_%ld %ld\n", i, rss_kb("VmHWM:"));
            printf("rss_kb_after_%ld %ld\n", i, rss_kb("VmRSS:"));
        }
    }
    curl_easy_cleanup(easy);
}

/// `inflight` transfers kept running on one multi handle: each finished one is re-added.
static void multi(const char *url) {
    CURLM *multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, http2 ? 1L : connections);
    curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, connections);
    curl_multi_setopt(multi, CURLMOPT_PIPELINING, http2 ? CURLPIPE_MULTIPLEX : CURLPIPE_NOTHING);
    curl_multi_setopt(multi, CURLMOPT_MAX_CONCURRENT_STREAMS, 256L);
    size_t received = 0;
    CURL **handles = calloc((size_t)inflight, sizeof *handles);
    for (long i = 0; i < inflight; i++) {
        handles[i] = make_easy(url, &received);
        curl_multi_add_handle(multi, handles[i]);
    }
    double warmEnd = now() + warmup, start = 0, end = 0, t = 0, cpu = 0;
    long done = 0, all = 0, running = inflight;
    int measuring = 0, stopping = 0;
    long added = inflight;
    while (running > 0) {
        int still = 0;
        curl_multi_perform(multi, &still);
        CURLMsg *message;
        int left;
        t = now();
        if (!measuring && t >= warmEnd) {
            measuring = 1;
            cpu = cpu_us();
            start = t;
            end = start + seconds;
        }
        if (requests > 0) {
            measuring = 1;  /* profiling: exactly `requests` transfers, untimed */
            if (added >= requests) stopping = 1;
        } else if (measuring && !stopping && t >= end) stopping = 1;
        while ((message = curl_multi_info_read(multi, &left))) {
            if (message->msg != CURLMSG_DONE) continue;
            if (message->data.result != CURLE_OK) fail("transfer", curl_easy_strerror(message->data.result));
            CURL *easy = message->easy_handle;
            curl_multi_remove_handle(multi, easy);
            if (measuring && !stopping) done++;
            if (measuring) all++;
            if (stopping) {
                running--;
            } else {
                curl_multi_add_handle(multi, easy);
                added++;
                if (requests > 0 && added >= requests) stopping = 1;
            }
        }
        if (running > 0) curl_multi_poll(multi, NULL, 0, 1000, NULL);
    }
    if (requests > 0) {
        printf("requests %ld\n", added);
    } else {
        printf("rate %.1f\n", (double)done / (end - start));
        printf("cpu_us %.2f\n", (cpu_us() - cpu) / (double)all);
    }
    for (long i = 0; i < inflight; i++) curl_easy_cleanup(handles[i]);
    free(handles);
    curl_multi_cleanup(multi);
}

int main(int argc, char **argv) {
    if (argc < 3) fail("usage", "libcurl-bench handshake|keepalive|multi|memory URL [options]");
    const char *mode = argv[1], *url = argv[2];
    for (int i = 3; i < argc; i++) {
        const char *option = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(option, "--http2") == 0) { http2 = 1; continue; }
        if (!value) fail("option needs a value", option);
        i++;
        if (strcmp(option, "--cacert") == 0) cacert = value;
        else if (strcmp(option, "--pin") == 0) pin = value;
        else if (strcmp(option, "--seconds") == 0) seconds = atof(value);
        else if (strcmp(option, "--warmup") == 0) warmup = atof(value);
        else if (strcmp(option, "--inflight") == 0) inflight = atol(value);
        else if (strcmp(option, "--connections") == 0) connections = atol(value);
        else if (strcmp(option, "--counts") == 0) sscanf(value, "%ld,%ld", &counts[0], &counts[1]);
        else if (strcmp(option, "--requests") == 0) requests = atol(value);
        else fail("unknown option", option);
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (requests > 0 && strcmp(mode, "multi") == 0) {
        multi(url);
    } else if (requests > 0) {
        size_t received = 0;
        CURL *easy = make_easy(url, &received);
        for (long i = 0; i < requests; i++) perform(easy);
        curl_easy_cleanup(easy);
        printf("requests %ld\n", requests);
    } else if (strcmp(mode, "handshake") == 0 || strcmp(mode, "keepalive") == 0) sequential(url);
    else if (strcmp(mode, "multi") == 0) multi(url);
    else if (strcmp(mode, "memory") == 0) memory(url);
    else fail("unknown mode", mode);
    curl_global_cleanup();
    return 0;
}
