#define _GNU_SOURCE  // dup3
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "curl_shims.h"

CURLcode kw_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode kw_curl_easy_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode kw_curl_easy_setopt_pointer(CURL *handle, CURLoption option, const void *value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode kw_curl_easy_set_write_function(CURL *handle, curl_write_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
}

CURLcode kw_curl_easy_set_header_function(CURL *handle, curl_write_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, callback);
}

CURLcode kw_curl_easy_set_prereq_function(CURL *handle, curl_prereq_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_PREREQFUNCTION, callback);
}

CURLcode kw_curl_easy_getinfo_private(CURL *handle, void **value) {
    return curl_easy_getinfo(handle, CURLINFO_PRIVATE, value);
}

int kw_curl_easy_getinfo_connects(CURL *handle) {
    long count = 1;
    if (curl_easy_getinfo(handle, CURLINFO_NUM_CONNECTS, &count) != CURLE_OK) return 1;
    return (int) count;
}

CURLcode kw_curl_easy_getinfo_sent(CURL *handle, long *head_bytes, curl_off_t *body_bytes) {
    CURLcode code = curl_easy_getinfo(handle, CURLINFO_REQUEST_SIZE, head_bytes);
    if (code != CURLE_OK) return code;
    return curl_easy_getinfo(handle, CURLINFO_SIZE_UPLOAD_T, body_bytes);
}

CURLMcode kw_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

CURLMcode kw_curl_multi_set_socket_function(CURLM *multi, curl_socket_callback callback) {
    return curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, callback);
}

CURLMcode kw_curl_multi_set_timer_function(CURLM *multi, curl_multi_timer_callback callback) {
    return curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, callback);
}

CURLMcode kw_curl_multi_setopt_pointer(CURLM *multi, CURLMoption option, void *value) {
    return curl_multi_setopt(multi, option, value);
}

curl_socket_t kw_curl_socket_timeout(void) { return CURL_SOCKET_TIMEOUT; }

size_t kw_curl_writefunc_pause(void) { return CURL_WRITEFUNC_PAUSE; }

int kw_curl_pause_cont(void) { return CURLPAUSE_CONT; }

int kw_curl_msg_done(const CURLMsg *message, CURL **handle, CURLcode *result) {
    *handle = message->easy_handle;
    if (message->msg != CURLMSG_DONE) return 0;
    *result = message->data.result;
    return 1;
}

int kw_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int kw_epoll_watch(int epfd, int fd, int in_out, int known) {
    struct epoll_event event;
    memset(&event, 0, sizeof event);
    event.events = ((in_out & 1) ? EPOLLIN : 0) | ((in_out & 2) ? EPOLLOUT : 0);
    event.data.fd = fd;
    int first = known ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    if (epoll_ctl(epfd, first, fd, &event) == 0) return 0;
    if (errno != (known ? ENOENT : EEXIST)) return -1;
    return epoll_ctl(epfd, known ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &event);
}

int kw_epoll_unwatch(int epfd, int fd) {
    struct epoll_event event;
    memset(&event, 0, sizeof event);
    if (epoll_ctl(epfd, EPOLL_CTL_DEL, fd, &event) == 0) return 0;
    return (errno == ENOENT || errno == EBADF) ? 0 : -1;
}

int kw_socket_has_pending_input(int fd) {
    unsigned char byte;
    ssize_t count = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (count >= 0) return 1;
    return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -1;
}

int kw_socket_kill_idle(int fd) {
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return -1;
    close(pair[1]);   /* the peer gone: a read of pair[0] is end of file at once */
    int result = dup3(pair[0], fd, O_CLOEXEC) < 0 ? -1 : 0;
    close(pair[0]);
    return result;
}

/// Writes the numeric address and port of `address` (IPv4 or IPv6); -1 for another family.
static int kw_address_text(const struct sockaddr_storage *address, char *text, int *port) {
    if (address->ss_family == AF_INET) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *) address;
        *port = ntohs(v4->sin_port);
        return inet_ntop(AF_INET, &v4->sin_addr, text, KW_ADDRESS_TEXT_SIZE) == NULL ? -1 : 0;
    }
    if (address->ss_family == AF_INET6) {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *) address;
        *port = ntohs(v6->sin6_port);
        return inet_ntop(AF_INET6, &v6->sin6_addr, text, KW_ADDRESS_TEXT_SIZE) == NULL ? -1 : 0;
    }
    return -1;
}

int kw_socket_endpoints(int fd, char *peer_address, int *peer_port, char *local_address, int *local_port) {
    struct sockaddr_storage peer, local;
    socklen_t peer_length = sizeof peer, local_length = sizeof local;
    if (getpeername(fd, (struct sockaddr *) &peer, &peer_length) != 0) return -1;
    if (getsockname(fd, (struct sockaddr *) &local, &local_length) != 0) return -1;
    if (kw_address_text(&peer, peer_address, peer_port) != 0) return -1;
    return kw_address_text(&local, local_address, local_port);
}

int kw_epoll_wait_tagged(int epfd, uint64_t *data, uint32_t *events, int *flags, int capacity, int timeout_ms) {
    struct epoll_event ready[256];
    if (capacity > 256) capacity = 256;
    int count = epoll_wait(epfd, ready, capacity, timeout_ms);
    if (count < 0) return errno == EINTR ? 0 : -1;
    for (int i = 0; i < count; i++) {
        uint32_t e = ready[i].events;
        data[i] = ready[i].data.u64;
        events[i] = e;
        flags[i] = ((e & EPOLLIN) ? CURL_CSELECT_IN : 0) | ((e & EPOLLOUT) ? CURL_CSELECT_OUT : 0)
                 | ((e & (EPOLLERR | EPOLLHUP)) ? CURL_CSELECT_ERR : 0);
    }
    return count;
}

int kw_descriptor_duplicate(int fd) { return fcntl(fd, F_DUPFD_CLOEXEC, 0); }

int kw_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

void kw_eventfd_signal(int fd) {
    uint64_t one = 1;
    ssize_t written = write(fd, &one, sizeof one);
    (void)written;  // EAGAIN means the counter is already non-zero: the loop will wake anyway
}

void kw_eventfd_drain(int fd) {
    uint64_t value;
    ssize_t got = read(fd, &value, sizeof value);
    (void)got;
}
