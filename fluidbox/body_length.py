"""A request body must say its length.

Django reads a body by its Content-Length and reads none without one, so a body sent
chunked (`Transfer-Encoding: chunked`, which gunicorn accepts) would reach the views as
empty: a gate call would be refused for fields it did carry, and `/v1/mcp` would answer a
parse error about a body it never read. Refused up front with 411 instead, in the API's
error shape, so the client knows to send the length.
"""

from django.http import JsonResponse


class BodyLengthMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if "HTTP_TRANSFER_ENCODING" in request.META and not request.META.get("CONTENT_LENGTH"):
            return JsonResponse(
                {
                    "error": "length_required",
                    "detail": "send the request body with a Content-Length header; "
                    "chunked bodies are not read",
                },
                status=411,
            )
        return self.get_response(request)
