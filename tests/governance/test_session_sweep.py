"""Expired sign-in sessions do not pile up: the worker deletes them (Django's
`clearsessions`, a minutely sweep) and leaves live ones alone."""

from datetime import timedelta

import pytest
from django.contrib.sessions.backends.db import SessionStore
from django.contrib.sessions.models import Session
from django.utils import timezone
from django_q.models import Schedule

from tests.support.servers import Worker
from tests.support.waiting import wait_until


def signed_in_session(expires_in: timedelta) -> str:
    store = SessionStore()
    store["_auth_user_id"] = "1"
    store.create()
    Session.objects.filter(pk=store.session_key).update(expire_date=timezone.now() + expires_in)
    return store.session_key


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_the_worker_deletes_expired_sessions_and_keeps_live_ones(tmp_path):
    assert Schedule.objects.filter(func="governance.tasks.sessions_sweep").count() == 1
    expired = signed_in_session(timedelta(hours=-1))
    live = signed_in_session(timedelta(hours=11))
    with Worker(tmp_path) as worker:
        worker.wait_until_ready()
        wait_until(
            lambda: not Session.objects.filter(pk=expired).exists(),
            "the worker to delete the expired session",
        )
    assert Session.objects.filter(pk=live).exists()
