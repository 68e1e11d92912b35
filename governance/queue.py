"""What the worker is asked to do later. Tasks are named by dotted path, so this module
imports no service and no task: services call it, and the worker's tasks call services.
"""

import logging
from datetime import datetime

from django.db import transaction
from django_q.models import Schedule
from django_q.tasks import async_task

logger = logging.getLogger(__name__)


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


def schedule_approval_followups(approval_id: int, expires_at: datetime) -> None:
    """After commit: the timeout task at expiry and the notifications, both on the worker."""
    transaction.on_commit(lambda: enqueue_approval_followups(approval_id, expires_at))
