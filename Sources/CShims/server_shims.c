#define _GNU_SOURCE
#include "server_shims.h"
#include <errno.h>
#include <sys/epoll.h>
#include <sys/socket.h>

int kw_server_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t token) {
    struct epoll_event event = { .events = events, .data = { .u64 = token } };
    return epoll_ctl(epfd, op, fd, &event);
}

int kw_server_epoll_wait(int epfd, uint64_t *tokens, uint32_t *events, int capacity, int timeout_ms) {
    struct epoll_event ready[256];
    if (capacity > 256) capacity = 256;
    int count = epoll_wait(epfd, ready, capacity, timeout_ms);
    if (count < 0) return errno == EINTR ? 0 : -1;
    for (int i = 0; i < count; i++) {
        tokens[i] = ready[i].data.u64;
        events[i] = ready[i].events;
    }
    return count;
}

int kw_server_accept(int listener, struct sockaddr *address, unsigned int *length) {
    socklen_t size = *length;
    int fd = accept4(listener, address, &size, SOCK_NONBLOCK | SOCK_CLOEXEC);
    *length = size;
    return fd;
}
