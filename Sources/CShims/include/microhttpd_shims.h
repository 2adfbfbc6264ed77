#pragma once
// libmicrohttpd calls Swift cannot make itself: MHD_start_daemon and the
// MHD_get_*_info functions are variadic. Owned by the HTTPServer module.
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>

/// What a content-reader callback returns at the end of its body, and to cut
/// the connection (MHD_CONTENT_READER_END_OF_STREAM / _END_WITH_ERROR are
/// casts Swift does not import).
enum {
    KEYWARD_MHD_END_OF_STREAM = -1,
    KEYWARD_MHD_END_WITH_ERROR = -2,
};

/// The URI log callback: the first thing MHD calls for a request, with the
/// raw request-target (before '?' splitting or unescaping). Its result
/// becomes the request's `*con_cls`.
typedef void *(*keyward_mhd_uri_log_callback)(void *cls, const char *uri,
                                              struct MHD_Connection *connection);

/// Every daemon setting Keyward uses, typed, so that Swift never builds a
/// variadic argument list.
struct keyward_mhd_settings {
    /// Bind address with its port (sockaddr_in or sockaddr_in6).
    const struct sockaddr *address;
    /// Worker threads, each with its own epoll loop (MHD_OPTION_THREAD_POOL_SIZE).
    unsigned int thread_pool_size;
    /// Open connections over the whole daemon (MHD_OPTION_CONNECTION_LIMIT).
    unsigned int connection_limit;
    /// Open connections per client IP address; 0 = unlimited.
    unsigned int per_ip_connection_limit;
    /// Idle seconds before MHD closes a connection; 0 = never.
    unsigned int connection_timeout_seconds;
    /// Bytes of MHD's per-connection memory pool: bounds the request head.
    size_t connection_memory_limit;
    /// listen(2) backlog.
    unsigned int listen_backlog;
    MHD_AccessHandlerCallback access_handler;
    void *access_handler_cls;
    MHD_RequestCompletedCallback completed;
    void *completed_cls;
    keyward_mhd_uri_log_callback uri_log;
    void *uri_log_cls;
    /// Non-zero: no thread of its own (`thread_pool_size` is ignored); the caller runs the daemon
    /// from its own loop (`keyward_mhd_epoll_fd`, MHD_run, MHD_get_timeout), and the listening
    /// socket is bound with SO_REUSEPORT so several such daemons can share one port.
    int external_loop;
};

/// What libmicrohttpd's log said it is about to refuse (the argument of the library-refusal hook).
enum {
    /// The connection's `Content-Length`: a value it cannot parse, or one over 2^64 − 1 (its 400/413).
    KEYWARD_MHD_REFUSED_LENGTH = 1,
    /// A record did not fit in the connection's memory pool (its 431): once the head is complete,
    /// that is the `Cookie` field, which it splits into one record per pair.
    KEYWARD_MHD_REFUSED_POOL_EXHAUSTED = 2,
};

/// Called on the thread that runs a connection when libmicrohttpd has just refused that
/// connection's request (see the KEYWARD_MHD_REFUSED_* values) and is about to queue its own
/// error page, before anything is sent. libmicrohttpd's log is the only place it says so:
/// daemons log to a function that passes these messages on, and drops the rest.
/// Set once, before any daemon starts.
void keyward_mhd_set_library_refusal_hook(void (*hook)(int what));

/// Called from the URI log callback with its target: makes libmicrohttpd see an empty query, so
/// that it stores no GET arguments. It keeps one pool record (~56 bytes) per argument, and when
/// they do not fit it loses its own error answer and leaves the connection hanging until the
/// timeout. Keyward reads the target itself and never asks libmicrohttpd for arguments.
void keyward_mhd_drop_query_arguments(const char *target);

/// The status of the response queued on the connection (by the application or by libmicrohttpd
/// itself), or 0 when none is (MHD_CONNECTION_INFO_HTTP_STATUS).
unsigned int keyward_mhd_queued_status(struct MHD_Connection *connection);

/// A pointer kept per thread (pthread key), for the objects only that thread's callbacks use;
/// `release` runs on a thread's stored pointer when the thread exits. Set `release` once, first.
void keyward_thread_local_set_release(void (*release)(void *));
void *keyward_thread_local_get(void);
void keyward_thread_local_set(void *value);

/// Starts a daemon: epoll, turbo, suspend/resume allowed; IPv6 when the address is; either
/// internal polling threads (a pool of `thread_pool_size`) or, with `external_loop`, none.
/// NULL on failure.
struct MHD_Daemon *keyward_mhd_start(const struct keyward_mhd_settings *settings);

/// An external-loop daemon's epoll descriptor: readable when MHD_run has socket work. -1 if none.
int keyward_mhd_epoll_fd(struct MHD_Daemon *daemon);

/// The port the daemon is bound to (useful after binding port 0); 0 if unknown.
uint16_t keyward_mhd_bound_port(struct MHD_Daemon *daemon);

/// Bytes of the request head as received (request line through the blank line), or 0 if unknown.
size_t keyward_mhd_header_size(struct MHD_Connection *connection);

/// The connection's socket, or -1.
int keyward_mhd_connection_fd(struct MHD_Connection *connection);

/// The client's address (sockaddr_in or sockaddr_in6), or NULL.
const struct sockaddr *keyward_mhd_client_address(struct MHD_Connection *connection);

/// Sets this connection's idle timeout to `seconds` (MHD_CONNECTION_OPTION_TIMEOUT; the call is
/// variadic, which Swift cannot make). Returns 0 on success, -1 otherwise.
int keyward_mhd_set_connection_timeout(struct MHD_Connection *connection, unsigned int seconds);

/// Writes a complete, minimal HTTP/1.1 response straight onto the connection's
/// socket (with a Date field, `Keyward-Error: <keyward_error>` and `Connection: close`), then shuts down the
/// sending side. For refusals libmicrohttpd cannot queue: 0.9.75 queues a
/// response only before or after the body, never while it is being read.
/// The caller then returns MHD_NO so libmicrohttpd closes the connection.
/// Nothing else may have been sent for this request. Returns 0 when every byte
/// was accepted by the socket, -1 otherwise.
int keyward_mhd_send_final_response(struct MHD_Connection *connection,
                                    unsigned int status, const char *reason,
                                    const char *content_type, const char *keyward_error,
                                    const void *body, size_t body_length);
