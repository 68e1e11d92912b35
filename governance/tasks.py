"""django-q2 entry points: ids in, services called. Nothing here decides anything itself.

Services never import this module: they enqueue by dotted path (governance/queue.py).
"""

from importlib import import_module

from django.conf import settings
from django.db import transaction
from django_q.models import Schedule

from governance.services.budget import reservations_release_expired
from governance.services.notifications import approval_notify_all, delivery_attempt
from governance.services.settlement import approval_expire
from governance.services.settlement import approvals_sweep as settle_expired

SWEEPS = (
    ("fluidbox: settle expired approvals", "governance.tasks.approvals_sweep"),
    ("fluidbox: release expired budget reservations", "governance.tasks.reservations_sweep"),
    # Loops for FLUIDBOX_SEQUENCER_SECONDS: leaves, checkpoints, witnesses (ledger.tasks).
    ("fluidbox: ledger sequencer", "ledger.tasks.sequencer_run"),
    ("fluidbox: delete expired sign-in sessions", "governance.tasks.sessions_sweep"),
)


def approval_timeout(approval_id: int) -> bool:
    return approval_expire(approval_id=int(approval_id))


def approvals_sweep() -> int:
    return settle_expired()


def reservations_sweep() -> int:
    return reservations_release_expired()


def sessions_sweep() -> None:
    """Django's own `clearsessions`: an expired session opens nothing, and goes."""
    import_module(settings.SESSION_ENGINE).SessionStore.clear_expired()


def approval_notify(approval_id: int) -> None:
    approval_notify_all(approval_id=int(approval_id))


def notification_deliver(delivery_id: int) -> None:
    delivery_attempt(delivery_id=int(delivery_id))


LEDGER_CHECK = "fluidbox: check the whole ledger"


@transaction.atomic
def ensure_schedules() -> None:
    """The minutely sweepers and the ledger check exist exactly once (run after every
    migrate), the check every FLUIDBOX_LEDGER_CHECK_MINUTES (none when 0), allowed as long
    as its period to run."""
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
    minutes = settings.FLUIDBOX_LEDGER_CHECK_MINUTES
    if not minutes:
        Schedule.objects.filter(name=LEDGER_CHECK).delete()
        return
    Schedule.objects.update_or_create(
        name=LEDGER_CHECK,
        defaults={
            "func": "ledger.tasks.ledger_check_run",
            "kwargs": f"q_options={{'timeout': {minutes * 60}}}",
            "schedule_type": Schedule.MINUTES,
            "minutes": minutes,
            "repeats": -1,
        },
    )
