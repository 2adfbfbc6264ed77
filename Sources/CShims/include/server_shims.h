// The HTTP server engine's readiness set: epoll over the listener and client connections.
// Wrapped here because `struct epoll_event` is packed on x86_64, so Swift cannot lay it out.
#include <stdint.h>

/// Readiness bits, as `epoll_ctl` and `epoll_wait` use them (EPOLLIN, EPOLLOUT, EPOLLRDHUP,
/// EPOLLERR, EPOLLHUP, EPOLLEXCLUSIVE), for Swift, which does not import the enum's values as plain integers.
#define KW_POLL_IN 0x001u
#define KW_POLL_OUT 0x004u
#define KW_POLL_ERR 0x008u
#define KW_POLL_HUP 0x010u
#define KW_POLL_RDHUP 0x2000u
#define KW_POLL_EXCLUSIVE (1u << 28)

/// `epoll_ctl(epfd, op, fd, {events, token})`: `op` 1 = add, 2 = delete, 3 = modify (EPOLL_CTL_*).
/// `token` comes back with every readiness of `fd`. Returns 0, or -1 (errno set).
int kw_server_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t token);
/// `epoll_wait` into plain arrays: for each ready descriptor, its token and readiness bits.
/// Returns how many are ready (0 on timeout or EINTR), -1 on another error. At most 256 per call.
int kw_server_epoll_wait(int epfd, uint64_t *tokens, uint32_t *events, int capacity, int timeout_ms);

struct sockaddr;
/// `accept4(listener, address, length, SOCK_NONBLOCK | SOCK_CLOEXEC)`: a non-blocking connection
/// or -1 (errno set; EAGAIN when none is waiting). glibc declares accept4 only under _GNU_SOURCE.
int kw_server_accept(int listener, struct sockaddr *address, unsigned int *length);
