"""Errors services raise; the API's exception handler turns each into one clear JSON answer."""


class ServiceError(Exception):
    status = 400
    code = "invalid"

    def __init__(self, detail: str, *, code: str | None = None, extra: dict | None = None):
        super().__init__(detail)
        self.detail = detail
        if code:
            self.code = code
        self.extra = extra or {}


class Invalid(ServiceError):
    status = 400
    code = "invalid"


class NotFound(ServiceError):
    status = 404
    code = "not_found"


class Forbidden(ServiceError):
    status = 403
    code = "forbidden"


class Conflict(ServiceError):
    status = 409
    code = "conflict"


class TooManyRequests(ServiceError):
    """429: come back after `retry_after` seconds (sent as the Retry-After header)."""

    status = 429
    code = "too_many_waits"

    def __init__(self, detail: str, *, retry_after: int, **kwargs):
        super().__init__(detail, **kwargs)
        self.retry_after = retry_after
