/*
 * The floor of libcurl's per-request cost, driven the way Keyward drives it: one multi handle on
 * the multi_socket API (a socket callback keeping one epoll set, a timer callback keeping one
 * deadline, curl_multi_socket_action for every ready socket and every due timer), a fixed number
 * of transfers in flight, and each finished easy handle reused for the next request after
 * curl_easy_reset with the least a proxied GET needs: the URL, a header list with one
 * Authorization line, a write callback that discards the body, HTTP/1.1, and CURLOPT_NOSIGNAL
 * (as Keyward sets it: no SIGPIPE juggling around each call). Nothing else runs in the
 * process, so what it costs per request is libcurl's own work (plus this loop's few lines).
 *
 * Usage: curl-floor URL REQUESTS [IN_FLIGHT (default 4)]
 *          makes REQUESTS keep-alive GETs to URL and exits (for callgrind and strace, which
 *          count N and 2N requests and take the difference);
 *        curl-floor URL 0 IN_FLIGHT SECONDS
 *          runs one unmeasured second, then SECONDS measured, and prints the requests done and
 *          the process's CPU (user + system, getrusage) per request over the measured part.
 * FLOOR_SIGNALS=1 in the environment leaves CURLOPT_NOSIGNAL off, to show what it saves.
 * Any non-200 answer or transfer error stops it with a message and exit status 1.
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>

static int epoll_fd;
static long timer_ms = -1;         /* libcurl's timer: -1 none, else due this many ms after set */
static double timer_due;           /* when it is due, in monotonic seconds */

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* CURLMOPT_SOCKETFUNCTION: mirror what libcurl wants watched into the epoll set. `socketp` is
 * non-NULL once the socket is in the set (marked with curl_multi_assign), so ADD and MOD differ. */
static int on_socket(CURL *easy, curl_socket_t fd, int what, void *multi, void *socketp) {
    (void)easy;
    if (what == CURL_POLL_REMOVE) {
        epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, NULL);
        curl_multi_assign(multi, fd, NULL);
        return 0;
    }
    struct epoll_event event = {0};
    event.data.fd = fd;
    if (what & CURL_POLL_IN) event.events |= EPOLLIN;
    if (what & CURL_POLL_OUT) event.events |= EPOLLOUT;
    if (socketp) {
        epoll_ctl(epoll_fd, EPOLL_CTL_MOD, fd, &event);
    } else {
        epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &event);
        curl_multi_assign(multi, fd, (void *)1);
    }
    return 0;
}

/* CURLMOPT_TIMERFUNCTION: -1 deletes the timer, otherwise it is due in `ms` (0 = now). */
static int on_timer(CURLM *multi, long ms, void *unused) {
    (void)multi; (void)unused;
    timer_ms = ms;
    if (ms >= 0) timer_due = now_seconds() + ms / 1000.0;
    return 0;
}

/* CURLOPT_WRITEFUNCTION: takes every body byte and keeps none. */
static size_t discard(char *data, size_t size, size_t count, void *unused) {
    (void)data; (void)unused;
    return size * count;
}

static const char *url;
static struct curl_slist *headers;  /* built once, read by every transfer */
static int keep_signals;            /* FLOOR_SIGNALS=1: leave CURLOPT_NOSIGNAL off */

/* Sets a fresh or reset easy handle up for one GET and hands it to the multi handle. */
static void start(CURLM *multi, CURL *easy) {
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    /* Without this libcurl sets SIGPIPE to ignored and back around every call into it (3.4
     * rt_sigaction per request here); Keyward sets it too. FLOOR_SIGNALS=1 leaves it out. */
    if (!keep_signals) curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_multi_add_handle(multi, easy);
}

static double cpu_seconds(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6
         + usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s URL REQUESTS [IN_FLIGHT] | %s URL 0 IN_FLIGHT SECONDS\n", argv[0], argv[0]);
        return 2;
    }
    url = argv[1];
    long total = atol(argv[2]);                   /* requests to make; 0 = timed mode */
    int in_flight = argc > 3 ? atoi(argv[3]) : 4;
    double seconds = argc > 4 ? atof(argv[4]) : 0;
    if (in_flight < 1 || (total <= 0 && seconds <= 0)) {
        fprintf(stderr, "need REQUESTS > 0, or 0 with SECONDS > 0, and IN_FLIGHT >= 1\n");
        return 2;
    }

    keep_signals = getenv("FLOOR_SIGNALS") != NULL;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    headers = curl_slist_append(NULL, "Authorization: Bearer bench-floor-key");
    CURLM *multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, multi);
    curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, on_timer);
    epoll_fd = epoll_create1(EPOLL_CLOEXEC);

    long started = 0, done = 0;
    for (int i = 0; i < in_flight && (total == 0 || started < total); i++, started++)
        start(multi, curl_easy_init());

    /* Timed mode: one unmeasured second, then the measured window. */
    double begin = now_seconds(), measure_from = begin + 1, measure_until = measure_from + seconds;
    int measuring = 0;
    long done_at_start = 0;
    double cpu_at_start = 0;

    int running = 1;
    struct epoll_event events[16];
    while (running) {
        int wait_ms = -1;
        if (timer_ms >= 0) {
            double left = timer_due - now_seconds();
            wait_ms = left <= 0 ? 0 : (int)(left * 1000) + 1;
        }
        int ready = epoll_wait(epoll_fd, events, 16, wait_ms);
        int still;
        for (int i = 0; i < ready; i++) {
            int flags = 0;
            if (events[i].events & (EPOLLIN | EPOLLHUP)) flags |= CURL_CSELECT_IN;
            if (events[i].events & EPOLLOUT) flags |= CURL_CSELECT_OUT;
            if (events[i].events & EPOLLERR) flags |= CURL_CSELECT_ERR;
            curl_multi_socket_action(multi, events[i].data.fd, flags, &still);
        }
        if (timer_ms >= 0 && now_seconds() >= timer_due) {
            timer_ms = -1;  /* libcurl sets it again from inside the call if it wants one */
            curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &still);
        }

        /* Finished transfers: check, count, and reuse the handle for the next request. */
        CURLMsg *message;
        int left_in_queue;
        while ((message = curl_multi_info_read(multi, &left_in_queue))) {
            if (message->msg != CURLMSG_DONE) continue;
            CURL *easy = message->easy_handle;
            long status = 0;
            curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
            if (message->data.result != CURLE_OK || status != 200) {
                fprintf(stderr, "request %ld failed: %s, status %ld\n", done + 1,
                        curl_easy_strerror(message->data.result), status);
                return 1;
            }
            done++;
            curl_multi_remove_handle(multi, easy);
            if (total > 0 && started >= total) {
                curl_easy_cleanup(easy);
                if (done == total) running = 0;
                continue;
            }
            curl_easy_reset(easy);
            start(multi, easy);
            started++;
        }

        if (total == 0) {
            double t = now_seconds();
            if (!measuring && t >= measure_from) {
                measuring = 1;
                done_at_start = done;
                cpu_at_start = cpu_seconds();
            } else if (measuring && t >= measure_until) {
                long requests = done - done_at_start;
                double cpu = cpu_seconds() - cpu_at_start;
                printf("%ld requests in %.2f s, %.2f us CPU per request\n", requests, t - measure_from,
                       cpu * 1e6 / requests);
                running = 0;
            }
        }
    }
    curl_multi_cleanup(multi);
    curl_slist_free_all(headers);
    curl_global_cleanup();
    return 0;
}
