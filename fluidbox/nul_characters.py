"""A NUL character in a request's address is refused up front.

PostgreSQL refuses a NUL in any text it is given, even in a comparison: a `?status=%00`
filter on a portal list, or a policy name in a path, raised a database error (a 500)
wherever a view put the value in a query. No name, id or filter value of fluidbox can hold
one, so the request is answered 400 before any view reads it. Form fields and JSON bodies
are refused field by field, by the forms and the API's serializers.
"""

from django.http import JsonResponse

NUL = "\x00"


def _has_nul(params) -> bool:
    return any(NUL in key or any(NUL in v for v in values) for key, values in params.lists())


def carries_nul(request) -> bool:
    return NUL in request.path or _has_nul(request.GET)


class NulCharactersMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if carries_nul(request):
            return JsonResponse(
                {"error": "invalid", "detail": "the request's address holds a NUL character (%00)"},
                status=400,
            )
        return self.get_response(request)
