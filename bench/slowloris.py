#!/usr/bin/env python3
"""Slowloris clients, for bench/slowloris.sh.

slowloris.py PORT N PROXY_PID
    opens N connections to 127.0.0.1:PORT and sends each one byte of a never-ending request head a
    second. Prints the proxy's RSS before, and after 10 s of trickling, then waits (at most 120 s)
    until the proxy has closed every connection and prints how long after its first byte each was
    cut (min, median, max). Exits 1 if any connection was still open at the deadline.
"""
import selectors
import socket
import statistics
import sys
import time

HEAD = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"X-Slow: " + b"a" * 100000


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    port, count, pid = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    before = rss_kib(pid)
    selector = selectors.DefaultSelector()
    started, sent, cut = {}, {}, {}
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.setblocking(False)
        sock.send(HEAD[:1])
        started[sock] = time.monotonic()
        sent[sock] = 1
        selector.register(sock, selectors.EVENT_READ)
    begin = time.monotonic()
    measured = None
    deadline = begin + 120
    next_byte = begin + 1
    while len(cut) < count and time.monotonic() < deadline:
        for key, _ in selector.select(timeout=max(0, next_byte - time.monotonic())):
            sock = key.fileobj
            try:
                data = sock.recv(4096)
            except ConnectionError:
                data = b""
            if not data:  # closed by the proxy (any answer it sent first is read and dropped)
                cut[sock] = time.monotonic() - started[sock]
                selector.unregister(sock)
                sock.close()
        if time.monotonic() >= next_byte:
            next_byte += 1
            for sock in list(started):
                if sock not in cut:
                    try:
                        sock.send(HEAD[sent[sock]:sent[sock] + 1])
                        sent[sock] += 1
                    except OSError:
                        pass
        if measured is None and time.monotonic() - begin >= 10:
            measured = rss_kib(pid)
            print(f"{count} slowloris connections, 1 byte/s: proxy RSS {before} KiB before, {measured} KiB "
                  f"after 10 s: {(measured - before) / count:.2f} KiB per connection", flush=True)
    if cut:
        times = sorted(cut.values())
        print(f"{len(cut)}/{count} cut by the proxy, after their first byte: min {times[0]:.1f} s, "
              f"median {statistics.median(times):.1f} s, max {times[-1]:.1f} s; "
              f"most bytes sent on one {max(sent.values())}")
    sys.exit(0 if len(cut) == count else 1)


if __name__ == "__main__":
    main()
