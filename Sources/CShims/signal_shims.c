#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#include "signal_shims.h"

static int signal_write_fd = -1;

static void write_signal_number(int signal_number) {
    int saved_errno = errno;  /* a handler must leave errno as it found it */
    unsigned char byte = (unsigned char) signal_number;
    ssize_t ignored = write(signal_write_fd, &byte, 1);
    (void) ignored;
    errno = saved_errno;
}

int kw_signal_pipe(const int *signals, int count) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return -1;
    if (fcntl(fds[1], F_SETFL, O_NONBLOCK) != 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    signal_write_fd = fds[1];
    struct sigaction action = {0};
    action.sa_handler = write_signal_number;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    for (int i = 0; i < count; i++) {
        if (sigaction(signals[i], &action, NULL) != 0) return -1;
    }
    return fds[0];
}
