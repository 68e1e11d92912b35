"""Token budget: request-keyed reservations under a row lock, settled idempotently."""

from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from governance.errors import Conflict, NotFound
from governance.models import (
    BudgetReservation,
    ReservationStatus,
    Run,
    RunBudget,
    RunStatus,
    UsageEntry,
)
from governance.object_ids import object_id
from governance.observability import metrics
from ledger.models import EventType
from ledger.redaction import redact
from ledger.services import chain_lock, event_append, event_data


@dataclass(frozen=True)
class ReservationResult:
    reservation: BudgetReservation | None
    created: bool
    remaining: int


def _locked_budget(run: Run) -> RunBudget:
    if settings.FLUIDBOX_UNSAFE_SKIP_BUDGET_LOCK:
        return RunBudget.objects.get(run=run)
    return RunBudget.objects.select_for_update().get(run=run)


def reservation_create(
    *, run: Run, request_key: str, max_output_tokens: int, input_tokens_upper_bound: int
) -> ReservationResult:
    """Book `max_output + input_upper_bound` tokens; refuse when they do not fit."""
    result = _reserve(
        run=run,
        request_key=request_key,
        max_output_tokens=max_output_tokens,
        input_tokens_upper_bound=input_tokens_upper_bound,
    )
    if result.created:
        metrics.budget_reservation_recorded("reserved")
    elif result.reservation is None:
        metrics.budget_reservation_recorded("denied")
    return result


def _reserve(
    *, run: Run, request_key: str, max_output_tokens: int, input_tokens_upper_bound: int
) -> ReservationResult:
    if run.status != RunStatus.ACTIVE:
        raise Conflict("this run has finished", code="run_finished")
    tokens = max_output_tokens + input_tokens_upper_bound
    existing = BudgetReservation.objects.filter(run=run, request_key=request_key).first()
    if existing is not None:
        return _replayed(existing, tokens)
    try:
        with transaction.atomic():
            budget = _locked_budget(run)
            # The run's counter next (the order every budget write appends in: budget, then
            # counter), then its status: a finish commits `run.finished` under that lock, so
            # a finish since the token check is seen here and nothing is booked after it.
            chain_lock(run_id=run.pk)
            if not Run.objects.filter(pk=run.pk, status=RunStatus.ACTIVE).exists():
                raise Conflict("this run has finished", code="run_finished")
            existing = BudgetReservation.objects.filter(run=run, request_key=request_key).first()
            if existing is not None:
                return _replayed(existing, tokens)
            remaining = budget.allowance - budget.spent - budget.outstanding
            if tokens > remaining:
                event_append(
                    run_id=run.pk,
                    type=EventType.BUDGET_DENIED,
                    redacted=redact(
                        {
                            "request_key": request_key,
                            "requested_tokens": tokens,
                            "remaining_tokens": max(0, remaining),
                        }
                    ),
                )
                return ReservationResult(None, False, max(0, remaining))
            reservation = BudgetReservation.objects.create(
                run=run,
                request_key=request_key,
                reserved_tokens=tokens,
                expires_at=timezone.now() + timedelta(seconds=settings.FLUIDBOX_RESERVATION_TTL),
            )
            if settings.FLUIDBOX_UNSAFE_SKIP_BUDGET_LOCK:
                # The control case: a read-modify-write without the lock loses updates.
                RunBudget.objects.filter(pk=budget.pk).update(
                    outstanding=budget.outstanding + tokens
                )
            else:
                RunBudget.objects.filter(pk=budget.pk).update(outstanding=F("outstanding") + tokens)
            event_append(
                run_id=run.pk,
                type=EventType.BUDGET_RESERVED,
                redacted=redact(
                    {
                        "reservation_id": reservation.pk,
                        "request_key": request_key,
                        "reserved_tokens": tokens,
                        "remaining_tokens": remaining - tokens,
                    }
                ),
            )
            return ReservationResult(reservation, True, remaining - tokens)
    except IntegrityError:
        existing = BudgetReservation.objects.filter(run=run, request_key=request_key).first()
        if existing is None:
            raise
        return _replayed(existing, tokens)


def _replayed(reservation: BudgetReservation, tokens: int) -> ReservationResult:
    if reservation.reserved_tokens != tokens:
        raise Conflict(
            "this request_key was already used for a different reservation",
            code="request_key_reused",
        )
    return ReservationResult(reservation, False, _remaining_as_booked(reservation))


def _remaining_as_booked(reservation: BudgetReservation) -> int:
    """What the reservation's first answer said remained (a retry answers the same body), as
    its `budget.reserved` event records it."""
    booked = event_data(
        reservation.run_id, EventType.BUDGET_RESERVED, reservation_id=reservation.pk
    )
    if booked is not None and isinstance(booked.get("remaining_tokens"), int):
        return booked["remaining_tokens"]
    return RunBudget.objects.get(run_id=reservation.run_id).remaining


def remaining_tokens(run: Run) -> int:
    return RunBudget.objects.get(run=run).remaining


@dataclass(frozen=True)
class SettleResult:
    usage: UsageEntry
    created: bool


def reservation_settle(
    *,
    run: Run,
    reservation_id,
    input_tokens: int,
    output_tokens: int,
    cost_usd: Decimal | None,
) -> SettleResult:
    """Reconcile a reservation with real usage. Idempotent by the reservation's primary key;
    the same key with different numbers is a conflict."""
    reservation_id = object_id(reservation_id, "no such reservation")
    with transaction.atomic():
        budget = RunBudget.objects.select_for_update().get(run=run)
        # The run's counter next, then its status, as a reservation does: a finish that
        # committed since the token check is seen here, and nothing is settled after it.
        chain_lock(run_id=run.pk)
        if not Run.objects.filter(pk=run.pk, status=RunStatus.ACTIVE).exists():
            raise Conflict("this run has finished", code="run_finished")
        reservation = BudgetReservation.objects.filter(run=run, pk=reservation_id).first()
        if reservation is None:
            raise NotFound("no such reservation")
        existing = UsageEntry.objects.filter(external_id=str(reservation.pk)).first()
        if existing is not None:
            same = (
                existing.input_tokens == input_tokens
                and existing.output_tokens == output_tokens
                and (cost_usd is None or existing.cost_usd == cost_usd)
            )
            if not same:
                raise Conflict(
                    "this reservation was already settled with different usage",
                    code="already_settled",
                )
            return SettleResult(existing, False)
        used = input_tokens + output_tokens
        held = reservation.reserved_tokens if reservation.status == ReservationStatus.HELD else 0
        usage = UsageEntry.objects.create(
            run=run,
            external_id=str(reservation.pk),
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cost_usd=cost_usd,
        )
        BudgetReservation.objects.filter(pk=reservation.pk).update(status=ReservationStatus.SETTLED)
        RunBudget.objects.filter(pk=budget.pk).update(
            outstanding=F("outstanding") - held, spent=F("spent") + used
        )
        event_append(
            run_id=run.pk,
            type=EventType.BUDGET_SETTLED,
            redacted=redact(
                {
                    "reservation_id": reservation.pk,
                    "reserved_tokens": reservation.reserved_tokens,
                    "input_tokens": input_tokens,
                    "output_tokens": output_tokens,
                    "cost_usd": str(cost_usd) if cost_usd is not None else None,
                    "late": reservation.status == ReservationStatus.EXPIRED,
                }
            ),
        )
        return SettleResult(usage, True)


def reservations_release_expired() -> int:
    """Release holds nobody settled in time; a late settle still records its usage."""
    released = 0
    due = BudgetReservation.objects.filter(
        status=ReservationStatus.HELD, expires_at__lte=timezone.now()
    ).values_list("pk", "run_id")
    for pk, run_id in list(due):
        with transaction.atomic():
            budget = RunBudget.objects.select_for_update().get(run_id=run_id)
            won = BudgetReservation.objects.filter(pk=pk, status=ReservationStatus.HELD).update(
                status=ReservationStatus.EXPIRED
            )
            if won:
                tokens = BudgetReservation.objects.get(pk=pk).reserved_tokens
                RunBudget.objects.filter(pk=budget.pk).update(outstanding=F("outstanding") - tokens)
                released += 1
    return released
