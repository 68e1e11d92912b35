"""One exception handler: every API error is a JSON object with `error` and `detail`."""

import logging

from django.core.exceptions import RequestDataTooBig
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import exception_handler as drf_exception_handler

from governance.errors import ServiceError

logger = logging.getLogger(__name__)

_CODES = {
    400: "invalid",
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    409: "conflict",
    413: "too_large",
    415: "unsupported_media_type",
    429: "throttled",
}


# Keys DRF puts messages under that are not a field's name: not shown as a label.
_UNLABELLED = {"detail", api_settings.NON_FIELD_ERRORS_KEY}


def _flatten(detail) -> str:
    if isinstance(detail, dict):
        return "; ".join(
            _flatten(value) if key in _UNLABELLED else f"{key}: {_flatten(value)}"
            for key, value in detail.items()
        )
    if isinstance(detail, list):
        return "; ".join(_flatten(item) for item in detail)
    return str(detail)


def exception_handler(exc, context):
    if isinstance(exc, ServiceError):
        retry_after = getattr(exc, "retry_after", None)
        return Response(
            {"error": exc.code, "detail": exc.detail, **exc.extra},
            status=exc.status,
            headers={"Retry-After": str(retry_after)} if retry_after is not None else None,
        )
    if isinstance(exc, RequestDataTooBig):
        return Response(
            {"error": "too_large", "detail": "request body is too large"},
            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    body = {"error": _CODES.get(response.status_code, "error"), "detail": _flatten(response.data)}
    if isinstance(exc, exceptions.ValidationError) and isinstance(exc.detail, dict):
        body["fields"] = exc.detail
    response.data = _encodable(body)
    return response


def _encodable(value):
    """`value` with every lone surrogate written as its `\\udXXX` escape: DRF's messages
    quote the input (`"\\ud800" is not a valid choice.`), and UTF-8 cannot encode one, so the
    400 would have become a 500 while being written."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {_encodable(key): _encodable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_encodable(item) for item in value]
    return value
