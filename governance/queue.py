"""What the worker is asked to do later. Tasks are named by dotted path, so this module
imports no service and no task: services call it, and the worker's tasks call services.
"""

import logging
from datetime import datetime

from django.db import transaction
from django_q.brokers.orm import ORM
from django_q.conf import Conf
from django_q.tasks import async_task

logger = logging.getLogger(__name__)


class _DueAtORM(ORM):
    """The ORM broker, with the queue row's claim lock set to the moment the task falls due.

    The ORM broker's pusher takes a row only once its `lock` has passed (it polls every
    `Q_CLUSTER["poll"]` seconds), which makes the lock a due time. django-q2's own `Schedule`
    rows are read by the scheduler only every ~30 s, so a timeout scheduled that way fired up
    to half a minute late.
    """

    def __init__(self, due_at: datetime, list_key: str | None = None):
        super().__init__(list_key=list_key or Conf.CLUSTER_NAME)
        self.due_at = due_at

    def enqueue(self, task):
        package = self.get_connection().create(key=self.list_key, payload=task, lock=self.due_at)
        return package.pk


def task_enqueue_at(due_at: datetime, func: str, *args, **kwargs) -> None:
    """Enqueue `func` to run on the worker as soon as `due_at` has passed."""
    async_task(func, *args, broker=_DueAtORM(due_at), **kwargs)


def enqueue_approval_followups(approval_id: int, expires_at: datetime) -> None:
    """Called on commit of an approval.requested: notify now, time out at expiry."""
    try:
        task_enqueue_at(expires_at, "governance.tasks.approval_timeout", approval_id)
        async_task("governance.tasks.approval_notify", approval_id, group="notifications")
    except Exception:  # the decision path must never fail because the queue did
        logger.exception("could not enqueue follow-ups for approval %s", approval_id)


def schedule_approval_followups(approval_id: int, expires_at: datetime) -> None:
    """After commit: the timeout task at expiry and the notifications, both on the worker."""
    transaction.on_commit(lambda: enqueue_approval_followups(approval_id, expires_at))
