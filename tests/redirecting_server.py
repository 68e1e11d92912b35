"""An HTTP server that answers every request with a redirect, for the egress guard's tests."""

from http.server import BaseHTTPRequestHandler


class Redirector(BaseHTTPRequestHandler):
    """Answers GET and POST with `307 Location: target` (a subclass sets `target`)."""

    target = ""

    def _redirect(self):
        self.send_response(307)
        self.send_header("Location", self.target)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = _redirect

    def log_message(self, *args):
        pass
