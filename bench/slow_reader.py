#!/usr/bin/env python3
"""A client that stops reading a large answer, for bench/slow-reader.sh.

slow_reader.py PROXY_PORT PATH TOKEN PROXY_PID UPSTREAM_PORT PAUSE_SECONDS
    GETs PATH through the proxy on PROXY_PORT, reads the head and the first 16 MiB of the body,
    then stops reading for PAUSE_SECONDS while it samples the proxy's resident memory (/proc) and
    the bytes the proxy's upstream socket has received (`ss`, the connection to UPSTREAM_PORT);
    then reads the rest and checks the length. Prints the figures; exits 1 if the body was short.
"""
import re
import socket
import subprocess
import sys
import time

MIB = 1 << 20


def rss_kib(pid, field="VmRSS"):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def upstream_received(upstream_port):
    """Bytes the kernel received on the proxy's connection to the upstream, and how many of them
    still wait unread in its receive queue (so read by the proxy = received - queued)."""
    out = subprocess.run(["ss", "-tinH", "state", "established", f"( dport = :{upstream_port} )"],
                         capture_output=True, text=True, check=True).stdout
    queued = int(out.split()[0]) if out.strip() else 0
    found = re.search(r"bytes_received:(\d+)", out)
    return (int(found.group(1)) if found else 0), queued


def main():
    port, path, token, pid, upstream_port, pause = sys.argv[1:7]
    pid, upstream_port, pause = int(pid), int(upstream_port), float(pause)
    rss_before = rss_kib(pid)
    sock = socket.create_connection(("127.0.0.1", int(port)))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 256 * 1024)  # a phone on a slow link
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
                 "Connection: close\r\n\r\n".encode())
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            sys.exit("the proxy closed before the head")
        data += chunk
    head, body_start = data.split(b"\r\n\r\n", 1)
    status = head.split(b"\r\n", 1)[0].decode()
    found = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    if not status.startswith("HTTP/1.1 200") or not found:
        sys.exit(f"unexpected answer: {head.decode(errors='replace')}")
    length = int(found.group(1))
    read = len(body_start)
    while read < 16 * MIB:
        read += len(sock.recv(1 << 20))
    rss_reading = rss_kib(pid)
    # Stop reading. Wait (at most 10 s) until the upstream side stops moving, then hold.
    deadline = time.monotonic() + 10
    last, _ = upstream_received(upstream_port)
    stalled_since = time.monotonic()
    while time.monotonic() < deadline and time.monotonic() - stalled_since < 1:
        time.sleep(0.2)
        now, _ = upstream_received(upstream_port)
        if now != last:
            last, stalled_since = now, time.monotonic()
    received_at_pause, queued_at_pause = upstream_received(upstream_port)
    rss_at_pause = rss_kib(pid)
    time.sleep(pause)
    received_after, queued_after = upstream_received(upstream_port)
    rss_after = rss_kib(pid)
    started = time.monotonic()
    while read < length:
        chunk = sock.recv(1 << 20)
        if not chunk:
            break
        read += len(chunk)
    seconds = time.monotonic() - started
    peak = rss_kib(pid, "VmHWM")
    print(f"answer {length} bytes; client read {16 * MIB // MIB} MiB, then stopped for {pause:.0f} s")
    print(f"upstream bytes received by the proxy: {received_at_pause} when it stalled, {received_after} "
          f"after {pause:.0f} s more (+{received_after - received_at_pause}); unread in its socket "
          f"{queued_at_pause} / {queued_after}")
    print(f"upstream share of the answer while the client stopped: {received_after / length * 100:.2f} %")
    print(f"proxy RSS KiB: before {rss_before}, reading {rss_reading}, stalled {rss_at_pause}, "
          f"after the pause {rss_after}, peak (VmHWM) {peak}; growth {rss_after - rss_before} KiB "
          f"(peak over before {peak - rss_before} KiB)")
    print(f"then read the remaining {(length - 16 * MIB) / MIB:.0f} MiB in {seconds:.1f} s; "
          f"body {'complete' if read == length else f'SHORT: {read} of {length}'}")
    sys.exit(0 if read == length else 1)


if __name__ == "__main__":
    main()
