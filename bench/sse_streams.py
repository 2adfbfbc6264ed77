#!/usr/bin/env python3
"""Held server-sent-event streams, for bench/sse-streams.sh.

upstream PORT EVENTS INTERVAL   an SSE origin: every request gets `EVENTS` events `INTERVAL` seconds
                                apart (the first at once), then `data: [DONE]`, chunked, then close.
client PORT PATH TOKEN N EVENTS RAMP_PER_S READY_FILE
                                opens N streams (RAMP_PER_S new ones a second), each POSTing to PATH
                                with the bearer TOKEN; writes READY_FILE once every stream has had
                                its first event; prints how many streams received all EVENTS events
                                and the DONE marker, then exits 0 when all did.
"""
import asyncio
import sys
import time


async def serve_stream(reader, writer, events, interval):
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":", 1)[1])
        if length:
            await reader.readexactly(length)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                     b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
        for number in range(1, events + 1):
            if number > 1:
                await asyncio.sleep(interval)  # the pacing under test: a slow model emitting tokens
            event = b"data: %d\n\n" % number
            writer.write(b"%x\r\n%s\r\n" % (len(event), event))
            await writer.drain()
        done = b"data: [DONE]\n\n"
        writer.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(done), done))
        await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


async def upstream(port, events, interval):
    server = await asyncio.start_server(lambda r, w: serve_stream(r, w, events, interval),
                                        "127.0.0.1", port, backlog=4096, limit=65536)
    async with server:
        await server.serve_forever()


class Tally:
    def __init__(self, count):
        self.first = 0
        self.complete = 0
        self.failed = 0
        self.count = count
        self.all_first = asyncio.Event()


async def one_stream(port, path, token, events, tally):
    got_first = False
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=65536)
        writer.write((f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n"
                      "Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}").encode())
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 200"):
            raise ConnectionError(head.split(b"\r\n", 1)[0].decode(errors="replace"))
        body = b""
        while True:
            chunk = await reader.read(65536)
            if not chunk:
                break
            body += chunk
            if not got_first and b"data: 1\n" in body:
                got_first = True
                tally.first += 1
                if tally.first == tally.count:
                    tally.all_first.set()
        writer.close()
        received = [n for n in range(1, events + 1) if b"data: %d\n" % n in body]
        if len(received) == events and b"data: [DONE]" in body:
            tally.complete += 1
        else:
            tally.failed += 1
    except (ConnectionError, OSError, asyncio.IncompleteReadError) as error:
        tally.failed += 1
        if tally.failed <= 3:
            print(f"stream failed: {error!r}", file=sys.stderr)
    if not got_first:
        tally.count -= 1  # never held: do not wait for it
        if tally.first >= tally.count:
            tally.all_first.set()


async def client(port, path, token, count, events, ramp, ready_file):
    tally = Tally(count)
    tasks = []
    started = time.monotonic()
    for index in range(count):
        tasks.append(asyncio.create_task(one_stream(port, path, token, events, tally)))
        if (index + 1) % max(1, ramp // 10) == 0:
            await asyncio.sleep(0.1)  # ramp: RAMP_PER_S new streams a second
    await tally.all_first.wait()
    print(f"held: {tally.first} streams had their first event after {time.monotonic() - started:.1f} s", flush=True)
    open(ready_file, "w").write(str(tally.first))
    await asyncio.gather(*tasks)
    total = len(tasks)
    print(f"{tally.complete}/{total} streams received all {events} events and [DONE] ({tally.failed} failed)", flush=True)
    return tally.complete == total


def main():
    if sys.argv[1] == "upstream":
        asyncio.run(upstream(int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])))
    elif sys.argv[1] == "client":
        port, path, token, count, events, ramp, ready = sys.argv[2:9]
        ok = asyncio.run(client(int(port), path, token, int(count), int(events), int(ramp), ready))
        sys.exit(0 if ok else 1)
    else:
        sys.exit(__doc__)


main()
