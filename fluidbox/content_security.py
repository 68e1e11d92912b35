"""A Content-Security-Policy on every response (Django 5.2 has none built in).

The portal's pages load scripts and styles only from this origin and never inline (the
dashboard's bars are SVG attributes, not style attributes), so nothing an agent manages to put
in a page could run, load from elsewhere, or send a form elsewhere, even if escaping failed.
"""

from django.conf import settings

POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "font-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        self.policy = getattr(settings, "CONTENT_SECURITY_POLICY", POLICY)

    def __call__(self, request):
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", self.policy)
        return response
