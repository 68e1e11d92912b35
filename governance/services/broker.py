"""The broker: a gated MCP call with a credential the sandbox never sees, at most once."""

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache

from django.conf import settings
from django.db import transaction

from fluidbox.prebuilt_sql import ModelTable
from governance import vault
from governance.binding_state import BindingNow, claim_with_binding, frozen_tool_with_binding
from governance.errors import Conflict, Invalid, TooManyRequests
from governance.gate.context import NOT_READ
from governance.gate.decision import FailClosed
from governance.gate.stages.frozen_set import binding_problem
from governance.mcp_sessions import pool as upstream_sessions
from governance.mcp_wire import AddressRefused, PlacementRefused, ToolDrifted, UpstreamError
from governance.models import BrokerStatus, Decision, FrozenTool, Run, Source, ToolCall
from governance.observability import metrics, tracing
from governance.services.connections import endpoint_for
from governance.services.gate import GateAnswer, permission_request
from ledger.models import EventType
from ledger.redaction import mask_secrets, payload_digest, redact, redact_text, secret_registry
from ledger.services import Alongside, event_append, event_append_at_head

SETTLED = (
    BrokerStatus.SUCCEEDED,
    BrokerStatus.TOOL_ERROR,
    BrokerStatus.FAILED,
    BrokerStatus.REFUSED,
)


_tool_calls = ModelTable(ToolCall)
_OUTCOME_FIELDS = (
    "broker_status",
    "broker_latency_ms",
    "broker_result_digest",
    "broker_is_error",
    "broker_error",
)


@cache
def _outcome_statement() -> str:
    columns = ", ".join(f"{_tool_calls.column(name)} = %s" for name in _OUTCOME_FIELDS)
    return f"UPDATE {_tool_calls.name} SET {columns} WHERE {_tool_calls.pk} = %s"


@dataclass(frozen=True)
class BrokeredAnswer:
    gate: GateAnswer
    result: dict | None
    replayed: bool
    refusal: tuple[str, str] | None = None  # (source, reason) when the broker refused

    def as_json(self) -> dict:
        body = self.gate.as_json()
        call = self.gate.tool_call
        if self.refusal is not None:
            source, reason = self.refusal
            body.update(
                decision="deny",
                source=source,
                reason=reason,
                tool_error=f"Permission denied by fluidbox ({source}): {reason}",
            )
        body["result"] = self.result
        body["replayed"] = self.replayed
        body["broker"] = (
            {
                "status": call.broker_status,
                "result_digest": call.broker_result_digest or None,
                "latency_ms": call.broker_latency_ms,
            }
            if call.broker_status
            else None
        )
        return body


def _record(
    call: ToolCall,
    run: Run,
    *,
    status: str,
    latency_ms: int | None,
    result_digest: str = "",
    is_error: bool | None = None,
    error: str = "",
    source: str | None = None,
    fail_closed: str | None = None,
    head: tuple[int, str] | None = None,
) -> None:
    # A server's error text may echo what it was sent: the arguments' secrets are masked.
    error = redact_text(error, arguments=call.arguments)[:300]
    outcome = {
        "broker_status": status,
        "broker_latency_ms": latency_ms,
        "broker_result_digest": result_digest,
        "broker_is_error": is_error,
        "broker_error": error,
    }
    # The outcome rides with the ledger's insert: one statement for both writes.
    written = Alongside(
        _outcome_statement(),
        [_tool_calls.prepared(name, value) for name, value in outcome.items()]
        + [_tool_calls.prepared("id", call.pk)],
    )
    event = redact(
        {
            **_named(call),
            "status": status,
            "latency_ms": latency_ms,
            "result_digest": result_digest or None,
            "is_error": is_error,
            "source": source,
            "error": error[:300] or None,
            **({"fail_closed": fail_closed} if fail_closed else {}),
        },
        arguments=call.arguments,
    )
    # Where the chain still ends at the gate's own events for this call (no other append to
    # the run came between), one statement, in no transaction of its own; else, or on
    # SQLite, the counter is locked and moved on in a transaction.
    appended = head is not None and event_append_at_head(
        run_id=run.pk, type=EventType.TOOL_BROKERED, redacted=event, head=head, alongside=written
    )
    if not appended:
        with transaction.atomic():
            event_append(
                run_id=run.pk, type=EventType.TOOL_BROKERED, redacted=event, alongside=written
            )
    metrics.brokered_call_recorded(
        connection=call.tool.partition(".")[0],  # brokered tools are `<connection-slug>.<tool>`
        outcome=status,
        seconds=latency_ms / 1000 if latency_ms is not None else None,
    )
    if fail_closed:
        metrics.fail_closed_recorded(fail_closed)
    tracing.current_tool_span().brokered(status)
    # What the update above wrote, without reading the row back.
    for name, value in outcome.items():
        setattr(call, name, value)


def _mask_credentials(value, endpoint):
    secrets = [v for v in (*endpoint.headers.values(), *endpoint.env.values()) if v]
    return _masked(value, secrets) if secrets else value


def _masked(value, secrets: list[str]):
    if isinstance(value, dict):
        return {mask_secrets(key, secrets): _masked(item, secrets) for key, item in value.items()}
    if isinstance(value, list):
        return [_masked(item, secrets) for item in value]
    if isinstance(value, str):
        return mask_secrets(value, secrets)
    return value


def _named(call: ToolCall) -> dict:
    """How a `tool.brokered` event names its call."""
    return {"tool_call_id": call.tool_call_id, "session_id": call.session_id, "tool": call.tool}


def calls_in_flight(run: Run) -> list[dict]:
    """The run's calls the broker has claimed and not yet recorded, named as their
    `tool.brokered` events will name them (masked alike): what `run.finished` lists as
    still to come. Read after the finish changed the run's status, this is exact: no call of
    a finished run is claimed (`binding_state.claim_with_binding`)."""
    running = ToolCall.objects.filter(run=run, broker_status=BrokerStatus.RUNNING).order_by("pk")
    return [redact(_named(call), arguments=call.arguments).data for call in running]


def _refusal_from_record(call: ToolCall) -> tuple[str, str] | None:
    if call.broker_status != BrokerStatus.REFUSED:
        return None
    source, _, reason = call.broker_error.partition(": ")
    return source, reason


def _since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def _refuse(
    gate: GateAnswer,
    call: ToolCall,
    run: Run,
    source: str,
    reason: str,
    *,
    latency_ms,
    fail_closed: str | None = None,
) -> BrokeredAnswer:
    """The gate allowed, but the broker will not call: recorded, and answered as a deny."""
    _record(
        call,
        run,
        status=BrokerStatus.REFUSED,
        latency_ms=latency_ms,
        error=f"{source}: {reason}",
        source=source,
        fail_closed=fail_closed,
        head=gate.ledger_head,
    )
    return BrokeredAnswer(
        GateAnswer(call, gate.approval), None, replayed=False, refusal=(str(source), reason)
    )


# A brokered call holds a web thread until its upstream answers (up to
# FLUIDBOX_MCP_TIMEOUT), and a run's upstream may be a member's own server that answers
# slowly on purpose: one run token must not hold every thread, as with approval waits
# (`governance.throttling`). Counted per process, in memory: no database round trip on the
# broker's path, and each process keeps its other threads.
_calls_in_flight: dict[str, int] = {}
_calls_in_flight_lock = threading.Lock()


@contextmanager
def _call_slot(run: Run) -> Iterator[None]:
    # A run token is cheap to come by (each run a person starts has one): all of one
    # organization's calls together are capped too, so its slow upstream cannot hold the
    # threads other organizations' calls need.
    caps = (
        (str(run.pk), settings.FLUIDBOX_WAITS_PER_CREDENTIAL, "this run", "WAITS_PER_CREDENTIAL"),
        (f"org:{run.org_id}", settings.FLUIDBOX_BROKERED_CALLS_PER_ORG, "this organization",
         "BROKERED_CALLS_PER_ORG"),
    )  # fmt: skip
    with _calls_in_flight_lock:
        for key, cap, holder, setting in caps:
            if _calls_in_flight.get(key, 0) >= cap:
                raise TooManyRequests(
                    f"{holder} already has {cap} brokered calls in flight in this process "
                    f"(FLUIDBOX_{setting}); send this one again once one ends",
                    retry_after=1,
                )
        for key, *_ in caps:
            _calls_in_flight[key] = _calls_in_flight.get(key, 0) + 1
    try:
        yield
    finally:
        with _calls_in_flight_lock:
            for key, *_ in caps:
                if _calls_in_flight[key] == 1:
                    del _calls_in_flight[key]
                else:
                    _calls_in_flight[key] -= 1


def broker_call(
    *,
    run: Run,
    session_id: str,
    tool_call_id: str,
    tool: str,
    arguments,
    wait_seconds: float,
    read: tuple[FrozenTool | None, BindingNow | None] | None = None,
) -> BrokeredAnswer:
    # The frozen tool, its connection and organization (for the egress rules of the
    # endpoint) and its binding as it is now, in one statement (or `read`: that statement's
    # answer, when the caller read it with the run); the gate is handed them instead of
    # reading them again.
    frozen, binding = read if read is not None else frozen_tool_with_binding(run, tool)
    if frozen is not None and not frozen.is_brokered:
        raise Invalid(f"{tool!r} is a sandbox tool: ask /permission and run it in the sandbox")
    # Taken before the gate: a call turned away is not recorded, so its ids may come again.
    # One execute_tool span for the gate and the upstream call (the gate joins it).
    with (
        _call_slot(run),
        tracing.tool_call_span(
            run=run, tool=tool, tool_call_id=tool_call_id, session_id=session_id, brokered=True
        ),
    ):
        return _gated_call(
            run=run,
            frozen=frozen,
            binding=binding,
            session_id=session_id,
            tool_call_id=tool_call_id,
            tool=tool,
            arguments=arguments,
            wait_seconds=wait_seconds,
        )


def _gated_call(
    *,
    run: Run,
    frozen: FrozenTool | None,
    binding: BindingNow | None,
    session_id: str,
    tool_call_id: str,
    tool: str,
    arguments,
    wait_seconds: float,
) -> BrokeredAnswer:
    gate = permission_request(
        run=run,
        session_id=session_id,
        tool_call_id=tool_call_id,
        tool=tool,
        arguments=arguments,
        wait_seconds=wait_seconds,
        brokered=True,
        frozen_tool=frozen,
        binding_now=binding if binding is not None else NOT_READ,
        # A call allowed just now is recorded already claimed, its binding re-read by the
        # recording statement, after every stage of the gate ran (one round trip fewer).
        claim_for=frozen.connection_id if frozen is not None else None,
    )
    call = gate.tool_call
    if call.decision != Decision.ALLOW:
        return BrokeredAnswer(gate, None, replayed=False)
    if gate.claimed_binding is not None:
        binding = gate.claimed_binding
    else:
        if call.broker_status:
            # At most once: a retry after the call ran (or while it runs) never calls again.
            return BrokeredAnswer(gate, None, replayed=True, refusal=_refusal_from_record(call))
        # An approved call (or one allowed by an earlier request): claim it and re-verify
        # the binding right before the credential is unsealed, in one statement (see
        # `claim_with_binding`).
        claimed, binding = claim_with_binding(
            call,
            run,
            frozen.connection_id,
            running=BrokerStatus.RUNNING,
            idle=BrokerStatus.NOT_BROKERED,
        )
        if not claimed:
            call.refresh_from_db()
            if not call.broker_status:
                # Nobody claimed it: the run finished after its token was checked.
                raise Conflict("this run has finished", code="run_finished")
            return BrokeredAnswer(gate, None, replayed=True, refusal=_refusal_from_record(call))
        call.broker_status = BrokerStatus.RUNNING
    # Either way the binding was read after the gate decided and before the credential is
    # unsealed, by the statement that claimed the call: a revocation committed before it
    # is seen here, and the call fails closed.
    problem = binding_problem(run, frozen, binding)
    if problem is not None:
        return _refuse(
            gate,
            call,
            run,
            problem.source,
            problem.reason,
            latency_ms=None,
            fail_closed=problem.fail_closed,
        )
    started = time.monotonic()
    try:
        connection = frozen.connection
        endpoint = endpoint_for(connection)
        # A pooled session of this connection under this very credential, URL and
        # allow-list, never another's; drift is checked on that session's listing.
        outcome = upstream_sessions.call_tool(
            scope=f"{connection.org_id}/{connection.pk}",
            generation=connection.authorization_generation,
            endpoint=endpoint,
            name=frozen.upstream_name,
            arguments=arguments,
            expected_digest=frozen.definition_digest,
            timeout=settings.FLUIDBOX_MCP_TIMEOUT,
        )
    except ToolDrifted as drift:
        return _refuse(gate, call, run, Source.CAPABILITY, str(drift), latency_ms=_since(started))
    except vault.VaultSealed:
        return _refuse(
            gate,
            call,
            run,
            Source.BINDING,
            "vault sealed",
            latency_ms=None,
            fail_closed=FailClosed.VAULT_SEALED,
        )
    except (AddressRefused, PlacementRefused) as refused:
        # Nothing was sent: the address was refused before a socket was opened, or the
        # credential's header or variable name before anything was sent or started.
        return _refuse(gate, call, run, Source.BINDING, str(refused), latency_ms=None)
    except (UpstreamError, vault.VaultError) as error:
        latency = _since(started)
        message = mask_secrets(str(error), secret_registry.snapshot())
        _record(
            call,
            run,
            status=BrokerStatus.FAILED,
            latency_ms=latency,
            is_error=True,
            error=message,
            fail_closed=FailClosed.VAULT_ERROR if isinstance(error, vault.VaultError) else None,
            head=gate.ledger_head,
        )
        if isinstance(error, UpstreamError) and error.sent:
            # A timeout or an answer that is not MCP comes after the server had the call: the
            # model must not read it as "nothing happened" and run a write twice.
            text = (
                f"The tool call failed: {message}. The server may have run it: check before "
                "calling it again."
            )
        else:
            text = f"The tool could not be called: {message}"
        result = {"content": [{"type": "text", "text": text}], "isError": True}
        return BrokeredAnswer(GateAnswer(call, gate.approval), result, replayed=False)
    latency = _since(started)
    result = {"content": outcome.content, "isError": outcome.is_error}
    if outcome.structured is not None:
        result["structuredContent"] = outcome.structured
    # A server that echoes the credential back must not hand it to the sandbox.
    result = _mask_credentials(result, endpoint)
    _record(
        call,
        run,
        status=BrokerStatus.TOOL_ERROR if outcome.is_error else BrokerStatus.SUCCEEDED,
        latency_ms=latency,
        result_digest=payload_digest(result),
        is_error=outcome.is_error,
        head=gate.ledger_head,
    )
    return BrokeredAnswer(GateAnswer(call, gate.approval), result, replayed=False)
