"""django-q2 entry points: ids in, services called. Nothing here decides anything itself."""

import logging
from datetime import datetime

from django.db import transaction
from django_q.models import Schedule
from django_q.tasks import async_task

logger = logging.getLogger(__name__)

SWEEPS = (
    ("fluidbox: settle expired approvals", "governance.tasks.approvals_sweep"),
    ("fluidbox: release expired budget reservations", "governance.tasks.reservations_sweep"),
    # Loops for FLUIDBOX_SEQUENCER_SECONDS: leaves, checkpoints, witnesses (ledger.tasks).
    ("fluidbox: ledger sequencer", "ledger.tasks.sequencer_run"),
)


def enqueue_approval_followups(approval_id: int, expires_at: datetime) -> None:
    """Called on commit of an approval.requested: notify now, time out at expiry."""
    try:
        Schedule.objects.create(
            name=f"fluidbox: approval {approval_id} timeout",
            func="governance.tasks.approval_timeout",
            args=str(approval_id),
            schedule_type=Schedule.ONCE,
            repeats=-1,
            next_run=expires_at,
        )
        async_task("governance.tasks.approval_notify", approval_id, group="notifications")
    except Exception:  # the decision path must never fail because the queue did
        logger.exception("could not enqueue follow-ups for approval %s", approval_id)


def approval_timeout(approval_id: int) -> bool:
    from governance.services.approvals import approval_expire

    return approval_expire(approval_id=int(approval_id))


def approvals_sweep() -> int:
    from governance.services.approvals import approvals_sweep as sweep

    return sweep()


def reservations_sweep() -> int:
    from governance.services.budget import reservations_release_expired

    return reservations_release_expired()


def approval_notify(approval_id: int) -> None:
    from governance.services.notifications import approval_notify_all

    approval_notify_all(approval_id=int(approval_id))


def notification_deliver(delivery_id: int) -> None:
    from governance.services.notifications import delivery_attempt

    delivery_attempt(delivery_id=int(delivery_id))


@transaction.atomic
def ensure_schedules() -> None:
    """The minutely sweepers exist exactly once (run after every migrate)."""
    for name, func in SWEEPS:
        Schedule.objects.update_or_create(
            name=name,
            defaults={
                "func": func,
                "schedule_type": Schedule.MINUTES,
                "minutes": 1,
                "repeats": -1,
            },
        )
