"""Exceptions the runner raises; a gate denial is never one of them (denials are data)."""

from __future__ import annotations

from typing import Any


class GateError(Exception):
    """Something went wrong talking to the permission gate; the call must not run."""


class GateAuthError(GateError):
    """The run session token was refused (401/403): the run is finished or the token is wrong."""

    def __init__(self, status_code: int, body: Any) -> None:
        self.status_code = status_code
        self.body = body
        super().__init__(
            f"the gate refused the run session token (HTTP {status_code}): {_error_text(body)}; "
            "the run may be finished, or the token belongs to another run"
        )


class GateRequestError(GateError):
    """The gate rejected the request itself (4xx other than auth); retrying would not help."""

    def __init__(self, status_code: int, body: Any) -> None:
        self.status_code = status_code
        self.body = body
        super().__init__(f"the gate rejected the request (HTTP {status_code}): {_error_text(body)}")


class SecretsRefused(GateRequestError):
    """No secrets for this run and tool (a read-only run, or a tool without `secrets: true`)."""


class GateUnavailable(GateError):
    """The gate could not be reached (connection errors, timeouts, 5xx) after every retry."""


class GateDeadlinePassed(GateUnavailable):
    """The caller's deadline for the whole decision passed before the gate answered."""


class GateProtocolError(GateError):
    """The gate answered with something this runner does not understand; fail closed."""


def _error_text(body: Any) -> str:
    if isinstance(body, dict):
        for key in ("detail", "error", "message"):
            if key in body:
                return str(body[key])
    text = str(body)
    return text[:300] if text else "no detail"
