"""Counts the keeper's renewals: one line per request, with the time it came."""
import http.server, sys, time

class Counter(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        print(f"{time.time():.3f} {self.path}", flush=True)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass

http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Counter).serve_forever()
