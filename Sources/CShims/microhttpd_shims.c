#include "microhttpd_shims.h"
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>

static void (*library_refusal_hook)(int) = NULL;

void keyward_mhd_set_library_refusal_hook(void (*hook)(int)) { library_refusal_hook = hook; }

/// MHD_OPTION_EXTERNAL_LOGGER: libmicrohttpd 0.9.75 logs "Failed to parse `Content-Length'
/// header" and "Too large value of 'Content-Length' header" just before it queues its own 400/413,
/// and "Not enough memory in pool to ..." just before it queues its own 431.
static void keyward_mhd_log(void *cls, const char *format, va_list arguments) {
    (void) cls;
    (void) arguments;
    if (library_refusal_hook == NULL || format == NULL) return;
    if (strstr(format, "Content-Length") != NULL && strstr(format, "Closing connection") != NULL)
        library_refusal_hook(KEYWARD_MHD_REFUSED_LENGTH);
    else if (strncmp(format, "Not enough memory in pool", strlen("Not enough memory in pool")) == 0)
        library_refusal_hook(KEYWARD_MHD_REFUSED_POOL_EXHAUSTED);
}

void keyward_mhd_drop_query_arguments(const char *target) {
    if (target == NULL) return;
    // The callback's target is libmicrohttpd's own read buffer, writable (it writes the NUL
    // ending the path there itself next). The '?' is followed at least by the target's NUL.
    char *query = strchr((char *) target, '?');
    if (query != NULL) query[1] = '\0';
}

unsigned int keyward_mhd_queued_status(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_HTTP_STATUS);
    return info == NULL ? 0 : info->http_status;
}

static pthread_key_t thread_local_key;
static pthread_once_t thread_local_once = PTHREAD_ONCE_INIT;
static void (*thread_local_release)(void *) = NULL;

static void thread_local_destroy(void *value) {
    if (thread_local_release != NULL && value != NULL) thread_local_release(value);
}

static void thread_local_make_key(void) { (void) pthread_key_create(&thread_local_key, thread_local_destroy); }

void keyward_thread_local_set_release(void (*release)(void *)) { thread_local_release = release; }

void *keyward_thread_local_get(void) {
    (void) pthread_once(&thread_local_once, thread_local_make_key);
    return pthread_getspecific(thread_local_key);
}

void keyward_thread_local_set(void *value) {
    (void) pthread_once(&thread_local_once, thread_local_make_key);
    (void) pthread_setspecific(thread_local_key, value);
}

struct MHD_Daemon *keyward_mhd_start(const struct keyward_mhd_settings *s) {
    // MHD_USE_ERROR_LOG: messages go to keyward_mhd_log, which keeps only the Content-Length ones.
    unsigned int flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_TURBO | MHD_USE_ERROR_LOG;
    if (!s->external_loop)
        flags |= MHD_USE_INTERNAL_POLLING_THREAD;
    if (s->address != NULL && s->address->sa_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    struct MHD_OptionItem options[] = {
        // First: options are read in order, and those before it would log to standard error.
        { MHD_OPTION_EXTERNAL_LOGGER, (intptr_t) keyward_mhd_log, NULL },
        { MHD_OPTION_SOCK_ADDR, 0, (void *) s->address },
        // An external-loop daemon has no threads; it shares its port with its siblings instead.
        s->external_loop ? (struct MHD_OptionItem) { MHD_OPTION_LISTENING_ADDRESS_REUSE, 1, NULL }
                         : (struct MHD_OptionItem) { MHD_OPTION_THREAD_POOL_SIZE, (intptr_t) s->thread_pool_size, NULL },
        { MHD_OPTION_CONNECTION_LIMIT, (intptr_t) s->connection_limit, NULL },
        { MHD_OPTION_PER_IP_CONNECTION_LIMIT, (intptr_t) s->per_ip_connection_limit, NULL },
        { MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t) s->connection_timeout_seconds, NULL },
        { MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t) s->connection_memory_limit, NULL },
        { MHD_OPTION_LISTEN_BACKLOG_SIZE, (intptr_t) s->listen_backlog, NULL },
        { MHD_OPTION_NOTIFY_COMPLETED, (intptr_t) s->completed, s->completed_cls },
        { MHD_OPTION_URI_LOG_CALLBACK, (intptr_t) s->uri_log, s->uri_log_cls },
        { MHD_OPTION_END, 0, NULL },
    };
    // The port argument is ignored when MHD_OPTION_SOCK_ADDR is given.
    return MHD_start_daemon(flags, 0, NULL, NULL,
                            s->access_handler, s->access_handler_cls,
                            MHD_OPTION_ARRAY, options,
                            MHD_OPTION_END);
}

int keyward_mhd_epoll_fd(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_EPOLL_FD);
    return info == NULL ? -1 : info->epoll_fd;
}

uint16_t keyward_mhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

size_t keyward_mhd_header_size(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    return info == NULL ? 0 : info->header_size;
}

int keyward_mhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : (int) info->connect_fd;
}

int keyward_mhd_set_connection_timeout(struct MHD_Connection *connection, unsigned int seconds) {
    return MHD_set_connection_option(connection, MHD_CONNECTION_OPTION_TIMEOUT, seconds) == MHD_YES ? 0 : -1;
}

const struct sockaddr *keyward_mhd_client_address(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info == NULL ? NULL : info->client_addr;
}

#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <errno.h>

int keyward_mhd_send_final_response(struct MHD_Connection *connection,
                                    unsigned int status, const char *reason,
                                    const char *content_type, const char *keyward_error,
                                    const void *body, size_t body_length) {
    int fd = keyward_mhd_connection_fd(connection);
    if (fd < 0) return -1;
    char date[64];
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm) == NULL ||
        strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", &tm) == 0)
        date[0] = '\0';
    char head[512];
    int head_length = snprintf(head, sizeof head,
        "HTTP/1.1 %u %s\r\nDate: %s\r\nContent-Type: %s\r\nKeyward-Error: %s\r\nContent-Length: %zu\r\n"
        "Connection: close\r\n\r\n",
        status, reason, date, content_type, keyward_error, body_length);
    if (head_length < 0 || (size_t) head_length >= sizeof head) return -1;
    // libmicrohttpd may have left the socket corked: uncork so the bytes leave now.
    int off = 0;
    (void) setsockopt(fd, IPPROTO_TCP, TCP_CORK, &off, sizeof off);
    const char *parts[2] = { head, (const char *) body };
    size_t lengths[2] = { (size_t) head_length, body_length };
    for (int part = 0; part < 2; part++) {
        size_t sent = 0;
        while (sent < lengths[part]) {
            ssize_t n = send(fd, parts[part] + sent, lengths[part] - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return -1;   // an empty send buffer takes a few hundred bytes; if not, give up
            sent += (size_t) n;
        }
    }
    (void) shutdown(fd, SHUT_WR);
    return 0;
}
