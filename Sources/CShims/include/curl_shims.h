#pragma once
// Typed wrappers over libcurl's variadic setters and its function-like macros, which Swift cannot
// call (libcurl's setopt functions are variadic, and Swift cannot call a C variadic function). Each wrapper passes exactly the argument type the option documents
// (https://curl.se/libcurl/c/curl_easy_setopt.html), so the variadic call is well-typed.
// Owner: Upstream.
#include <curl/curl.h>
#include <stdint.h>

/// `curl_easy_setopt` for CURLOPTTYPE_LONG options (flags, milliseconds, enums).
CURLcode kw_curl_easy_setopt_long(CURL *handle, CURLoption option, long value);
/// `curl_easy_setopt` for CURLOPTTYPE_OFF_T options (sizes in bytes, e.g. POSTFIELDSIZE_LARGE).
CURLcode kw_curl_easy_setopt_off(CURL *handle, CURLoption option, curl_off_t value);
/// `curl_easy_setopt` for string, object and data-pointer options (URL, HTTPHEADER, PRIVATE, *DATA).
/// String options are copied by libcurl, except CURLOPT_POSTFIELDS (use COPYPOSTFIELDS).
CURLcode kw_curl_easy_setopt_pointer(CURL *handle, CURLoption option, const void *value);

/// CURLOPT_WRITEFUNCTION: the response body callback.
CURLcode kw_curl_easy_set_write_function(CURL *handle, curl_write_callback callback);
/// CURLOPT_HEADERFUNCTION: one call per complete response header line (CRLF included).
CURLcode kw_curl_easy_set_header_function(CURL *handle, curl_write_callback callback);
/// CURLOPT_PREREQFUNCTION (libcurl ≥ 7.80): called once a connection is ready, before the request is sent.
CURLcode kw_curl_easy_set_prereq_function(CURL *handle, curl_prereq_callback callback);

/// `curl_easy_getinfo` for CURLINFO_PRIVATE (the pointer set through CURLOPT_PRIVATE).
CURLcode kw_curl_easy_getinfo_private(CURL *handle, void **value);
/// CURLINFO_NUM_CONNECTS: how many new connections the transfer made so far (0 before the request
/// of a transfer on a kept connection); 1 when libcurl cannot tell.
int kw_curl_easy_getinfo_connects(CURL *handle);

/// What of the request libcurl handed to the socket: the request head's bytes (CURLINFO_REQUEST_SIZE)
/// and the body's (CURLINFO_SIZE_UPLOAD_T).
CURLcode kw_curl_easy_getinfo_sent(CURL *handle, long *head_bytes, curl_off_t *body_bytes);

/// `curl_multi_setopt` for long-valued multi options (connection limits, cache size).
CURLMcode kw_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value);

/// CURLMOPT_SOCKETFUNCTION: libcurl says which sockets to watch, for what (CURL_POLL_*).
CURLMcode kw_curl_multi_set_socket_function(CURLM *multi, curl_socket_callback callback);
/// CURLMOPT_TIMERFUNCTION: libcurl says when it next wants `curl_multi_socket_action(CURL_SOCKET_TIMEOUT)`.
CURLMcode kw_curl_multi_set_timer_function(CURLM *multi, curl_multi_timer_callback callback);
/// `curl_multi_setopt` for pointer options (CURLMOPT_SOCKETDATA, CURLMOPT_TIMERDATA).
CURLMcode kw_curl_multi_setopt_pointer(CURLM *multi, CURLMoption option, void *value);
/// CURL_SOCKET_TIMEOUT: the "no socket, the timer fired" argument of `curl_multi_socket_action`.
curl_socket_t kw_curl_socket_timeout(void);

/// CURL_WRITEFUNC_PAUSE: returned from a write callback, pauses the transfer; libcurl keeps the
/// chunk and delivers it again after `curl_easy_pause(CURLPAUSE_CONT)`.
size_t kw_curl_writefunc_pause(void);
/// CURLPAUSE_CONT: unpause both directions.
int kw_curl_pause_cont(void);

/// The CURLMsg fields Swift cannot read through the union: the easy handle and, for CURLMSG_DONE,
/// its result. Returns 1 for a CURLMSG_DONE message, 0 for any other message.
int kw_curl_msg_done(const CURLMsg *message, CURL **handle, CURLcode *result);


// The Upstream loop's readiness set: epoll over libcurl's sockets plus an eventfd for wakeups.
// Wrapped here because `struct epoll_event` is packed on x86_64 and eventfd lives outside Swift's Glibc.

/// `epoll_create1(EPOLL_CLOEXEC)`; -1 on failure.
int kw_epoll_create(void);
/// Watches `fd` for reading (bit 1) and/or writing (bit 2): EPOLL_CTL_ADD when `known` is 0, else
/// EPOLL_CTL_MOD; either falls back to the other (a descriptor number may have been closed and reused
/// behind the caller's back). 0 or -1.
int kw_epoll_watch(int epfd, int fd, int in_out, int known);
/// Stops watching `fd`; 0 or -1 (ENOENT and EBADF are not errors: the socket may already be closed).
int kw_epoll_unwatch(int epfd, int fd);

/// Replaces the connection behind `fd` with one end of a socket pair whose other end is closed
/// (dup3, close-on-exec kept), closing the connection while the descriptor number stays libcurl's.
/// For an idle cached connection libcurl still owns: its next liveness check (libcurl 7.88: poll,
/// then a one-byte MSG_PEEK) reads end of file and takes the connection as closed, so the request
/// gets a new connection. Bytes a server sent unasked would have passed that check and been read
/// as the next answer. An unconnected TCP socket would not do: its peek fails with ENOTCONN,
/// which libcurl 7.88 counts as alive, and the request then fails to send. Returns 0, or -1
/// (errno set).
int kw_socket_kill_idle(int fd);
/// Whether the connected socket `fd` has something to read right now without waiting: a byte
/// (peeked, not taken) or end of file. For a kept connection about to carry a new request that
/// means the server spoke unasked or closed. Returns 1 or 0; -1 on another error (errno set).
int kw_socket_has_pending_input(int fd);
/// The two ends of the connected TCP socket `fd` as libcurl reports a connection to the
/// pre-request callback: numeric addresses (`inet_ntop`, at most 45 bytes plus NUL, into buffers of
/// `KW_ADDRESS_TEXT_SIZE`) and ports. Returns 0, or -1 when the socket has no peer (not connected,
/// reset, closed) or is not IPv4/IPv6.
#define KW_ADDRESS_TEXT_SIZE 46
int kw_socket_endpoints(int fd, char *peer_address, int *peer_port, char *local_address, int *local_port);
/// `epoll_wait` keeping each ready entry's whole 64-bit data (a libcurl socket registered by
/// `kw_epoll_watch` comes back as its fd, upper 32 bits zero; other registrations as their token),
/// its raw EPOLL* bits, and the same bits as CURL_CSELECT_* flags. Returns how many are ready
/// (0 on timeout or EINTR), -1 on another error. At most 256 per call.
int kw_epoll_wait_tagged(int epfd, uint64_t *data, uint32_t *events, int *flags, int capacity, int timeout_ms);
/// `fcntl(fd, F_DUPFD_CLOEXEC, 0)`: a second descriptor for the same open file (for an epoll set:
/// the same set, alive until both are closed); -1 on failure (errno set).
int kw_descriptor_duplicate(int fd);
/// A non-blocking eventfd (counter 0); -1 on failure.
int kw_eventfd(void);
/// Adds 1 to the eventfd counter (wakes epoll_wait).
void kw_eventfd_signal(int fd);
/// Resets the eventfd counter to 0.
void kw_eventfd_drain(int fd);
