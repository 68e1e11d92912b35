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
