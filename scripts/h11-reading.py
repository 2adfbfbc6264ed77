"""How Python's h11 (pinned in scripts/h11-differential-requirements.txt) reads each request head
of Tests/Fixtures/http1-heads/corpus.json, written as the reference verdicts the Swift test
HTTP1DifferentialTests compares Keyward's parser with.

usage: h11-reading.py CORPUS OUT   (OUT: the verdicts as JSON, one object per case, by name)

A case's head is a JSON string of code points U+0000-U+00FF, one byte each (latin-1). h11 is
given the whole head at once as a server connection, then end of input. Its verdict:
- "accept", with the method, target, version, the header fields as h11 gives them (names
  lowercased, values trimmed) and the body framing h11 chose (none, length N, chunked);
- "refuse", with h11's error text and its suggested status;
- "incomplete" when h11 still needs data once the head's bytes are all given.
"""
import json
import sys

import h11


def reading(head: bytes) -> dict:
    connection = h11.Connection(h11.SERVER)
    try:
        connection.receive_data(head)
        event = connection.next_event()
        if event is h11.NEED_DATA:
            return {"verdict": "incomplete"}
        if not isinstance(event, h11.Request):
            return {"verdict": "refuse", "error": "event " + type(event).__name__, "status": 400}
        # h11 chooses the body reader when the request is read; its type and length are the framing.
        reader = connection._reader
        kind = type(reader).__name__
        if kind == "ContentLengthReader":
            framing = "length %d" % reader._length
        elif kind == "ChunkedReader":
            framing = "chunked"
        else:
            framing = "none"
        return {
            "verdict": "accept",
            "method": event.method.decode("latin-1"),
            "target": event.target.decode("latin-1"),
            "version": event.http_version.decode("latin-1"),
            "fields": [[name.decode("latin-1"), value.decode("latin-1")] for name, value in event.headers],
            "framing": framing,
        }
    except h11.RemoteProtocolError as error:
        return {"verdict": "refuse", "error": str(error), "status": error.error_status_hint}


def main() -> None:
    corpus_path, out_path = sys.argv[1], sys.argv[2]
    cases = json.load(open(corpus_path))
    verdicts = {"h11": h11.__version__,
                "cases": {case["name"]: reading(case["head"].encode("latin-1")) for case in cases}}
    with open(out_path, "w") as out:
        json.dump(verdicts, out, indent=1, ensure_ascii=True, sort_keys=True)
        out.write("\n")


main()
