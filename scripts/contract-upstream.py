"""A provider stand-in for scripts/api-contract.sh: answers every method with 200 and a small JSON
echo (no body for HEAD), so any 5xx the contract run sees is Keyward's own. Usage: PORT."""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Echo(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        body_length = len(self.rfile.read(length)) if length else 0
        payload = json.dumps({"method": self.command, "path": self.path, "body_bytes": body_length}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_TRACE = answer

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Echo).serve_forever()
