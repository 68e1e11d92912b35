"""Recording the gate's decision: one ToolCall, its ledger events, and the approval row,
written together (a settled decision in one statement at the ledger head, else in one
transaction under the run's counter lock); retries with the same ids get the settled
answer."""

import time
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import timedelta

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from fluidbox.prebuilt_sql import ModelTable, statement_cursor
from governance.binding_state import (
    BindingNow,
    binding_from_row,
    binding_read,
    insert_claimed_with_binding,
)
from governance.errors import Conflict
from governance.gate.context import NOT_READ, CallContext
from governance.gate.decision import Decision, Outcome
from governance.gate.pipeline import decide
from governance.gate.stages.approval import granted, over_the_cap, run_grant_covers
from governance.models import (
    Approval,
    ApprovalStatus,
    BrokerStatus,
    FrozenTool,
    Run,
    RunStatus,
    ToolCall,
)
from governance.observability import metrics, tracing
from governance.queue import schedule_approval_followups
from governance.run_sessions import ledger_head_as_read, ledger_head_moved
from governance.services.settlement import approval_expire_if_due, decision_event_data
from governance.services.wakeup import wakeups
from governance.throttling import wait_slot
from ledger.models import EventType
from ledger.redaction import Redacted, argument_preview, redact
from ledger.services import (
    InsertedAlongside,
    ReadAlongside,
    events_append_at_head,
    events_reserve,
    events_write,
)

# Every decision writes one; prebuilt, because the ORM's insert costs more CPU than the row.
_tool_calls = ModelTable(ToolCall)


@dataclass(frozen=True)
class GateAnswer:
    tool_call: ToolCall
    approval: Approval | None
    # The run's chain as this decision's own append left it (seq, hash), when it was just
    # recorded: the broker's record of the call appends at it in one statement.
    ledger_head: tuple[int, str] | None = None
    # A brokered call allowed just now and recorded already claimed by the broker (RUNNING):
    # its binding as the recording statement re-read it (see `insert_claimed_with_binding`).
    claimed_binding: BindingNow | None = None

    def as_json(self) -> dict:
        call = self.tool_call
        approval = None
        if self.approval is not None:
            approval = {
                "id": str(self.approval.pk),
                "status": self.approval.status,
                "expires_at": self.approval.expires_at.isoformat().replace("+00:00", "Z"),
            }
        return {
            "decision": call.decision,
            "source": call.source or None,
            "reason": call.reason,
            "rule": call.rule,
            "approval": approval,
            "tool_error": call.tool_error or None,
            "original_verdict": call.original_verdict or None,
        }


def _new_call(ctx: CallContext, decision: Decision, digest: str, now) -> ToolCall:
    return ToolCall(
        run=ctx.run,
        session_id=ctx.session_id,
        tool_call_id=ctx.tool_call_id,
        tool=ctx.tool,
        arguments=ctx.arguments,
        arguments_digest=digest,
        call_key=ctx.call_key,
        decision=decision.outcome,
        source=decision.source or "",
        reason=decision.reason,
        rule=decision.rule,
        original_verdict=decision.original_verdict or "",
        tool_error=decision.tool_error or "",
        decided_at=None if decision.outcome == Outcome.PENDING else now,
    )


def _requested_event(ctx: CallContext, digest: str) -> Redacted:
    return redact(
        {
            "session_id": ctx.session_id,
            "tool_call_id": ctx.tool_call_id,
            "tool": ctx.tool,
            "arguments_digest": digest,
            "arguments_preview": argument_preview(ctx.arguments, found=ctx.argument_secrets),
            "definition_digest": ctx.definition_digest or None,
        },
        arguments=ctx.argument_secrets,
    )


def _decided_event(ctx: CallContext, call: ToolCall, decision: Decision) -> Redacted:
    run = ctx.run
    return redact(
        decision_event_data(
            call,
            policy_version=run.policy_version.number,
            policy_digest=run.policy_digest,
            definition_digest=ctx.definition_digest,
            segments=decision.segments[:20] or None,
            **_fail_closed(decision),
            **tracing.ledger_ids(),
        ),
        arguments=ctx.argument_secrets,
    )


def _fail_closed(decision: Decision) -> dict:
    return {"fail_closed": str(decision.fail_closed)} if decision.fail_closed else {}


def _record_at_head(
    ctx: CallContext, decision: Decision, digest: str, claim_for: int | None
) -> GateAnswer | None:
    """A settled decision (no approval) recorded in ONE statement, in no transaction of its
    own: the call's row and its two events, written only if the run's chain still ends
    where the token check read it. None, with nothing written, when that head is not known
    or has moved (another call of the run appended in between), or off PostgreSQL: `_record`
    then writes them under the counter's lock. A retry's duplicate ids make the statement
    fail on the unique index, as the insert in `_record` does.

    A brokered call allowed for the broker (`claim_for`) is recorded claimed, and the same
    statement re-reads its binding, as `insert_claimed_with_binding` does in `_record`: the
    statement starts after every stage has decided and the credential is unsealed after it
    has committed, so a revocation committed before it is seen."""
    head = ledger_head_as_read(ctx.run)
    if head is None or connection.vendor != "postgresql":
        return None
    call = _new_call(ctx, decision, digest, timezone.now())
    reading = None
    if claim_for is not None and decision.outcome == Outcome.ALLOW:
        call.broker_status = BrokerStatus.RUNNING
        reading = ReadAlongside(*binding_read(ctx.run, claim_for))
    # Inside a caller's transaction (a test's, say), a savepoint: a refused duplicate then
    # leaves that transaction usable for reading the recorded call.
    with transaction.atomic() if connection.in_atomic_block else nullcontext():
        appended = events_append_at_head(
            run_id=ctx.run.pk,
            events=[
                (EventType.TOOL_REQUESTED, _requested_event(ctx, digest)),
                (EventType.TOOL_DECISION, _decided_event(ctx, call, decision)),
            ],
            head=head,
            inserting=InsertedAlongside(_tool_calls, call),
            reading=reading,
        )
    if appended is None:
        return None
    last = appended.events[-1]
    ledger_head_moved(ctx.run, (last.seq, last.hash))
    claimed = binding_from_row(appended.read, ctx.run) if reading is not None else None
    return GateAnswer(call, None, (last.seq, last.hash), claimed)


def _record(
    ctx: CallContext, decision: Decision, digest: str, claim_for: int | None
) -> tuple[GateAnswer, Decision]:
    """The decision recorded in the caller's transaction, under the run's counter lock, and
    the decision as recorded (a call that would ask may find the run's approvals full)."""
    run = ctx.run
    # The counter's lock first, as `_record_at_head` takes it before inserting the call:
    # a duplicate of this call recorded the other way then waits here, not in a deadlock.
    reserved = events_reserve(run_id=run.pk, count=2)
    # A run's finish appends `run.finished` under the same lock, in the transaction that
    # ends the run: a finish since the token check is seen here, and nothing is recorded
    # after it. (`_record_at_head` needs no such check: a finish moves the head it holds.)
    if not Run.objects.filter(pk=run.pk, status=RunStatus.ACTIVE).exists():
        raise Conflict("this run has finished", code="run_finished")
    if decision.outcome == Outcome.PENDING and run_grant_covers(ctx):
        # A grant for exactly this call committed since the approval stage looked (its
        # decision held this lock while writing it): the call is allowed by it, rather than
        # asking a human again about a call this run already granted.
        decision = granted(decision.rule, decision.segments)
    if decision.outcome == Outcome.PENDING:
        # The approval stage's cap, asked again under the lock: calls asking at the same
        # moment cannot pass it together.
        decision = over_the_cap(run, decision) or decision
    now = timezone.now()
    call = _new_call(ctx, decision, digest, now)
    claimed = None
    if claim_for is not None and decision.outcome == Outcome.ALLOW:
        # Claimed for the broker as it is recorded, with the binding re-read in the same
        # statement: one round trip instead of the broker's separate claim.
        call.broker_status = BrokerStatus.RUNNING
        claimed = insert_claimed_with_binding(call, run, claim_for)
    else:
        with statement_cursor() as cursor:
            _tool_calls.insert(cursor, [call])  # the unique ids index refuses a duplicate here
    requested = _requested_event(ctx, digest)
    if decision.outcome == Outcome.PENDING:
        tool = ctx.frozen_tool
        approval = Approval.objects.create(
            run=run,
            call=call,
            session_id=ctx.session_id,
            tool_call_id=ctx.tool_call_id,
            tool=ctx.tool,
            call_key=ctx.call_key,
            tool_definition_digest=ctx.definition_digest,
            policy_version=run.policy_version,
            connection=tool.connection if tool else None,
            rule=decision.rule,
            expires_at=now + timedelta(seconds=run.policy_version.approval_timeout),
        )
        approval_requested = redact(
            {
                "approval_id": approval.pk,
                "session_id": ctx.session_id,
                "tool_call_id": ctx.tool_call_id,
                "tool": ctx.tool,
                "rule": decision.rule,
                "reason": decision.reason,
                "policy_version": run.policy_version.number,
                "policy_digest": run.policy_digest,
                "definition_digest": ctx.definition_digest or None,
                "expires_at": approval.expires_at.isoformat(),
                **_fail_closed(decision),
                **tracing.ledger_ids(),
            },
            arguments=ctx.argument_secrets,
        )
        appended = events_write(
            reserved,
            [
                (EventType.TOOL_REQUESTED, requested),
                (EventType.APPROVAL_REQUESTED, approval_requested),
            ],
        )
        ledger_head_moved(run, (appended[-1].seq, appended[-1].hash))
        schedule_approval_followups(approval.pk, approval.expires_at)
        return GateAnswer(call, approval), decision
    appended = events_write(
        reserved,
        [
            (EventType.TOOL_REQUESTED, requested),
            (EventType.TOOL_DECISION, _decided_event(ctx, call, decision)),
        ],
    )
    head = (appended[-1].seq, appended[-1].hash)
    ledger_head_moved(run, head)
    return GateAnswer(call, None, head, claimed), decision


def _existing(run: Run, session_id: str, tool_call_id: str) -> ToolCall | None:
    # get(), not first(): the ids are unique per run, and first()'s ORDER BY pk costs CPU.
    try:
        return ToolCall.objects.get(run=run, session_id=session_id, tool_call_id=tool_call_id)
    except ToolCall.DoesNotExist:
        return None


def _same_request(call: ToolCall, tool: str, digest: str) -> None:
    if call.tool != tool or call.arguments_digest != digest:
        raise Conflict(
            "this (session_id, tool_call_id) was already used for a different call; "
            "use a new tool_call_id",
            code="tool_call_id_reused",
        )


def _settled_answer(call: ToolCall, wait_seconds: float) -> GateAnswer:
    approval = Approval.objects.filter(call=call).first()
    if call.decision != Outcome.PENDING or approval is None:
        return GateAnswer(call, approval)
    approval = approval_expire_if_due(approval)
    if approval.status == ApprovalStatus.PENDING and wait_seconds > 0:
        until_expiry = (approval.expires_at - timezone.now()).total_seconds()
        pk = approval.pk

        def settled() -> bool:
            return not Approval.objects.filter(pk=pk, status=ApprovalStatus.PENDING).exists()

        seconds = max(0.0, min(wait_seconds, until_expiry + 0.05))
        # A parked call holds a web thread: the run's token may hold only a few at once (a
        # 429 here leaves the call recorded; the retry with the same ids re-attaches).
        org_id = Run.objects.filter(pk=call.run_id).values_list("org_id", flat=True).get()
        with wait_slot(f"run:{call.run_id}", seconds=seconds, org_id=org_id):
            wakeups.wait(pk, seconds, settled)
        approval.refresh_from_db()
        approval = approval_expire_if_due(approval)
    call.refresh_from_db()
    return GateAnswer(call, approval)


def permission_request(
    *,
    run: Run,
    session_id: str,
    tool_call_id: str,
    tool: str,
    arguments,
    wait_seconds: float = 0,
    brokered: bool = False,
    frozen_tool: FrozenTool | None | object = NOT_READ,
    binding_now: BindingNow | object = NOT_READ,
    claim_for: int | None = None,
) -> GateAnswer:
    """Decide one tool call (or return the settled decision for a retry).

    `frozen_tool`: the run's frozen tool of that name (None: there is none) when the caller
    has just read it, so the frozen-set stage does not read it again; `binding_now`: a
    brokered tool's binding as the caller read it with the tool, in the same statement.
    `claim_for` (the broker's): a connection id; a call this request newly allows is then
    recorded already claimed by the broker, with its binding to that connection re-read in
    the same statement (`GateAnswer.claimed_binding`). A retry, a denial or an ASK is
    recorded and answered as without it, and the broker claims an approved call itself.
    """
    with tracing.tool_call_span(
        run=run, tool=tool, tool_call_id=tool_call_id, session_id=session_id, brokered=brokered
    ) as span:
        answer, decision = _decide_and_record(
            run=run,
            session_id=session_id,
            tool_call_id=tool_call_id,
            tool=tool,
            arguments=arguments,
            wait_seconds=wait_seconds,
            brokered=brokered,
            frozen_tool=frozen_tool,
            binding_now=binding_now,
            claim_for=claim_for,
        )
        call = answer.tool_call
        span.answered(
            decision=call.decision,
            source=call.source or None,
            rule=call.rule,
            policy_version=run.policy_version.number,
            replayed=decision is None,
            fail_closed=decision.fail_closed if decision is not None else None,
        )
    return answer


def _decide_and_record(
    *,
    run: Run,
    session_id: str,
    tool_call_id: str,
    tool: str,
    arguments,
    wait_seconds: float,
    brokered: bool = False,
    frozen_tool: FrozenTool | None | object = NOT_READ,
    binding_now: BindingNow | object = NOT_READ,
    claim_for: int | None = None,
) -> tuple[GateAnswer, Decision | None]:
    """The answer, and the decision when this request made a new one (None for a retry)."""
    if run.status != RunStatus.ACTIVE:
        raise Conflict("this run has finished", code="run_finished")
    started = time.perf_counter()
    # Decide first and let the unique (run, session_id, tool_call_id) index catch a retry or a
    # concurrent duplicate: a new call, the common case, costs no look-up. The stages write
    # nothing, so deciding a retry again is harmless; its recorded answer is what it gets.
    ctx = CallContext(
        run=run,
        session_id=session_id,
        tool_call_id=tool_call_id,
        tool=tool,
        arguments=arguments,
        brokered=brokered,
    )
    if frozen_tool is not NOT_READ:
        ctx.__dict__["frozen_tool"] = frozen_tool
    if binding_now is not NOT_READ:
        ctx.__dict__["binding_now"] = binding_now
    decision = decide(ctx).redacted(ctx.argument_secrets)
    digest = ctx.arguments_digest
    try:
        answer = None
        if decision.outcome != Outcome.PENDING:
            answer = _record_at_head(ctx, decision, digest, claim_for)
        if answer is None:
            with transaction.atomic():
                answer, decision = _record(ctx, decision, digest, claim_for)
    except IntegrityError:
        call = _existing(run, session_id, tool_call_id)
        if call is None:
            raise
    else:
        metrics.gate_decision_recorded(
            decision=decision.outcome,
            source=decision.source,
            seconds=time.perf_counter() - started,
        )
        if decision.fail_closed:
            metrics.fail_closed_recorded(decision.fail_closed)
        if answer.approval is None:
            return answer, decision  # settled just now: nothing to wait for
        call = answer.tool_call
        _same_request(call, tool, digest)
        return _settled_answer(call, wait_seconds), decision
    _same_request(call, tool, digest)
    return _settled_answer(call, wait_seconds), None
