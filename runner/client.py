"""The runner's client for the fluidbox API: it holds only the run session token (SPEC §8)."""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, Self
from urllib.parse import quote

import httpx

from runner.deadline import Deadline
from runner.decisions import BudgetExhausted, GateDecision, Reservation
from runner.errors import (
    GateAuthError,
    GateDeadlinePassed,
    GateProtocolError,
    GateRequestError,
    GateUnavailable,
    SecretsRefused,
)

TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
MAX_WAIT_SECONDS = 30  # the gate caps a single long-poll at 30 s (SPEC §4)
_RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})
# A long-poll ends this long before the deadline, so its answer still arrives in time.
_DEADLINE_MARGIN_SECONDS = 2.0


class GateClient:
    """Asks the gate, long-polls approvals, books budget and calls brokered tools for one run.

    Every request that the server may already have applied is retried with the same key
    (`session_id`/`tool_call_id`, `request_key`, reservation id), so a retry after a lost
    answer or a server restart re-attaches to what the server recorded instead of duplicating it.

    With `trust_env=False` no proxy, certificate or `.netrc` variable of the environment is
    read: the agent CLI's hook, whose environment a project can set (Gemini CLI loads the
    project's `.env`), asks only the URL it was configured with.

    With a `deadline`, nothing outlasts it: each request's connect and read timeouts are cut
    to the time left, no retry starts past it, and then `GateDeadlinePassed` is raised.
    """

    def __init__(
        self,
        base_url: str,
        run_id: str | int,
        session_token: str,
        *,
        timeout: float = 10.0,
        retries: int = 8,
        backoff: float = 0.25,
        max_backoff: float = 5.0,
        poll_interval: float = 1.0,
        transport: httpx.BaseTransport | None = None,
        deadline: Deadline | None = None,
        trust_env: bool = True,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must be an http(s) URL, not {base_url!r}")
        if not session_token:
            raise ValueError("a run session token is required")
        self.run_id = str(run_id)
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.poll_interval = poll_interval
        self.timeout = timeout
        self.deadline = deadline
        self._run_path = f"/v1/runs/{quote(self.run_id, safe='')}"
        # Redirects are refused so the token is never replayed to another origin.
        self._http = httpx.Client(
            base_url=base_url.rstrip("/"),
            headers={
                "Authorization": f"Bearer {session_token}",
                "Accept": "application/json",
            },
            timeout=timeout,
            follow_redirects=False,
            transport=transport,
            trust_env=trust_env,
        )

    def __repr__(self) -> str:
        return f"GateClient(base_url={str(self._http.base_url)!r}, run_id={self.run_id!r})"

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def ask(
        self,
        session_id: str,
        tool_call_id: str,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        wait_seconds: int = 25,
        total_wait: float | None = None,
    ) -> GateDecision:
        """The gate's decision for one call; waits while it is pending, up to `total_wait`.

        Returns a `pending` decision only when `total_wait` ran out first.
        """
        body = {
            "session_id": session_id,
            "tool_call_id": tool_call_id,
            "tool": _checked_tool_name(tool),
            "arguments": dict(arguments),
        }
        return self._decide(f"{self._run_path}/permission", body, tool, wait_seconds, total_wait)

    def call_brokered(
        self,
        session_id: str,
        tool_call_id: str,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        wait_seconds: int = 25,
        total_wait: float | None = None,
    ) -> GateDecision:
        """A brokered MCP call: the decision, and when allowed its `result` (content, isError)."""
        path = f"{self._run_path}/tools/{quote(_checked_tool_name(tool), safe='')}/call"
        body = {
            "session_id": session_id,
            "tool_call_id": tool_call_id,
            "arguments": dict(arguments),
        }
        return self._decide(path, body, tool, wait_seconds, total_wait)

    def reserve(
        self, request_key: str, max_output_tokens: int, input_tokens_upper_bound: int
    ) -> Reservation | BudgetExhausted:
        response = self._send(
            "POST",
            f"{self._run_path}/budget/reservations",
            json={
                "request_key": request_key,
                "max_output_tokens": max_output_tokens,
                "input_tokens_upper_bound": input_tokens_upper_bound,
            },
        )
        body = _json_of(response)
        if response.status_code == 409 and body.get("error") == "budget_exhausted":
            return BudgetExhausted(
                remaining_tokens=body.get("remaining_tokens"), request_key=request_key
            )
        _raise_for_request_error(response, body)
        try:
            return Reservation(
                id=str(body["id"]),
                reserved_tokens=int(body["reserved_tokens"]),
                remaining_tokens=body.get("remaining_tokens"),
                request_key=request_key,
            )
        except (KeyError, TypeError, ValueError) as error:
            raise GateProtocolError(f"unexpected reservation answer: {body!r:.300}") from error

    def settle(
        self,
        reservation_id: str,
        input_tokens: int,
        output_tokens: int,
        cost_usd: Decimal | str | float | None = None,
    ) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
        }
        if cost_usd is not None:
            payload["cost_usd"] = str(Decimal(str(cost_usd)))
        path = f"{self._run_path}/budget/reservations/{quote(str(reservation_id), safe='')}/settle"
        response = self._send("POST", path, json=payload)
        body = _json_of(response)
        _raise_for_request_error(response, body)
        return body

    def fetch_secrets(self, tool: str, *, session_id: str, tool_call_id: str) -> dict[str, str]:
        """The environment a `secrets: true` tool gets, fetched just before it runs.

        `GET /v1/runs/{id}/secrets?tool=&session_id=&tool_call_id=` → `{"env": {"NAME": "value"}}`,
        served only for a call the gate allowed. A 403 (a read-only run, a tool that declares
        no secrets, a call not allowed) raises `SecretsRefused`; the tool must not run.
        """
        response = self._send(
            "GET",
            f"{self._run_path}/secrets",
            params={
                "tool": _checked_tool_name(tool),
                "session_id": session_id,
                "tool_call_id": tool_call_id,
            },
            refused_is_auth_error=False,
        )
        body = _json_of(response)
        if response.status_code == 403:
            raise SecretsRefused(403, body)
        _raise_for_request_error(response, body)
        env = body.get("env")
        if not isinstance(env, dict) or not all(
            isinstance(name, str) and isinstance(value, str) for name, value in env.items()
        ):
            raise GateProtocolError("the secrets answer has no {'env': {name: value}} mapping")
        return dict(env)

    def finish(self) -> dict[str, Any]:
        """End the run; the session token stops working afterwards."""
        response = self._send("POST", f"{self._run_path}/finish", json={})
        body = _json_of(response)
        _raise_for_request_error(response, body)
        return body

    def _decide(
        self,
        path: str,
        body: dict[str, Any],
        tool: str,
        wait_seconds: int,
        total_wait: float | None,
    ) -> GateDecision:
        wait_seconds = max(0, min(int(wait_seconds), MAX_WAIT_SECONDS))
        deadline = None if total_wait is None else time.monotonic() + total_wait
        while True:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            this_wait = wait_seconds if remaining is None else min(wait_seconds, int(remaining))
            if self.deadline is not None:
                this_wait = max(
                    0, min(this_wait, int(self.deadline.left() - _DEADLINE_MARGIN_SECONDS))
                )
            started = time.monotonic()
            response = self._send(
                "POST", path, json={**body, "wait_seconds": this_wait}, wait=this_wait
            )
            answer = _json_of(response)
            _raise_for_request_error(response, answer)
            _check_same_call(body, answer)
            decision = GateDecision.from_response(tool, answer)
            if not decision.pending:
                return decision
            if deadline is not None and time.monotonic() >= deadline:
                return decision
            if self.deadline is not None and this_wait == 0 and wait_seconds > 0:
                return decision  # no time left for another long-poll before the deadline
            # A gate that answers "pending" early must not turn waiting into a busy loop.
            pause = self.poll_interval - (time.monotonic() - started)
            if deadline is not None:
                pause = min(pause, deadline - time.monotonic())
            if self.deadline is not None:
                pause = min(pause, self.deadline.left())
            if pause > 0:
                time.sleep(pause)

    def _send(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, str] | None = None,
        wait: float = 0.0,
        refused_is_auth_error: bool = True,
    ) -> httpx.Response:
        failures = 0
        while True:
            try:
                response = self._http.request(
                    method, path, json=json, params=params, timeout=self._timeout_for(wait)
                )
            except (httpx.TransportError, httpx.DecodingError) as error:
                # A body that cannot be decoded (a bad Content-Encoding) is retried like one
                # cut off mid-way: the same ids re-attach to whatever the server recorded.
                problem = f"{type(error).__name__}: {error}"
                retry_after = None
            else:
                if response.status_code == 401 or (
                    response.status_code == 403 and refused_is_auth_error
                ):
                    raise GateAuthError(response.status_code, _json_or_text(response))
                if response.is_redirect:
                    raise GateProtocolError(
                        f"the gate answered {method} {path} with a redirect, which is not "
                        "followed (the run token stays with the configured origin)"
                    )
                if response.status_code not in _RETRYABLE_STATUS:
                    return response
                problem = f"HTTP {response.status_code}"
                retry_after = _retry_after_seconds(response)
            failures += 1
            if failures > self.retries:
                raise GateUnavailable(
                    f"{method} {path} failed {failures} times; last: {problem}. "
                    "The call was not run."
                )
            delay = min(self.max_backoff, self.backoff * 2 ** (failures - 1))
            delay = min(self.max_backoff, retry_after) if retry_after else delay
            if self.deadline is not None and delay >= self.deadline.left():
                raise self._deadline_passed(f"{method} {path}, last: {problem}")
            time.sleep(delay)

    def _timeout_for(self, wait: float) -> httpx.Timeout:
        connect, read = self.timeout, self.timeout + wait
        if self.deadline is not None:
            left = self.deadline.left()
            if left <= 0:
                raise self._deadline_passed("no time left to ask")
            connect, read = min(connect, left), min(read, left)
        return httpx.Timeout(connect, read=read)

    def _deadline_passed(self, detail: str) -> GateDeadlinePassed:
        return GateDeadlinePassed(
            f"no answer within the {self.deadline.seconds:g} s deadline ({detail}). "
            "The call was not run."
        )


def _checked_tool_name(tool: str) -> str:
    # "." and ".." fit the SPEC pattern but would walk the URL path when put into it.
    if not TOOL_NAME.match(tool) or tool in (".", ".."):
        raise ValueError(f"not a valid tool name: {tool!r}")
    return tool


def _check_same_call(asked: Mapping[str, Any], answer: Mapping[str, Any]) -> None:
    """An answer that names another call (a misrouted or replayed answer) is not this one's."""
    for key in ("session_id", "tool_call_id"):
        if key in answer and answer[key] != asked[key]:
            raise GateProtocolError(
                f"the gate answered for {key} {str(answer[key])[:80]!r}, not the "
                f"{asked[key]!r} asked about; the call was not run"
            )


def _json_of(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError as error:
        if response.status_code < 400:
            raise GateProtocolError(
                f"HTTP {response.status_code} answer is not JSON: {response.text[:200]!r}"
            ) from error
        return {"detail": response.text[:300]}
    if not isinstance(body, dict):
        raise GateProtocolError(f"HTTP {response.status_code} answer is not a JSON object")
    return body


def _json_or_text(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return response.text[:300]


def _raise_for_request_error(response: httpx.Response, body: Any) -> None:
    if response.status_code >= 400:
        raise GateRequestError(response.status_code, body)


def _retry_after_seconds(response: httpx.Response) -> float | None:
    value = response.headers.get("Retry-After", "")
    return float(value) if value.isdigit() else None
