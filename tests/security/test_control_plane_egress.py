"""Approval webhooks and audit sinks send from inside the deployment to a URL an
organization's admin typed: the same egress rules as connections hold for them. An
internal address is refused before a socket opens, until the organization's allow-list
names it."""

import pytest

from governance.models import NotificationDelivery
from governance.services.notifications import approval_notify_all, channel_create_webhook
from governance.services.orgs import org_allowed_hosts_set
from ledger.models import AuditSink, Event
from ledger.sinks import sink_create
from ledger.streaming import sinks_deliver
from tests.governance.gate.test_pipeline import ask
from tests.support.receivers import SinkReceiver

# Loopback, and not in the test settings' deployment allow-list (which names 127.0.0.1).
INTERNAL = "127.0.0.2"


@pytest.fixture
def internal_receiver():
    receiver = SinkReceiver(host=INTERNAL)
    with receiver:
        yield receiver


@pytest.mark.django_db(transaction=True)
def test_a_webhook_to_an_internal_address_is_refused_until_the_org_allows_it(
    org, make_run, internal_receiver
):
    url = f"http://{INTERNAL}:{internal_receiver.port}/hook"
    channel_create_webhook(org=org, name="internal", url=url, secret="s3cret-for-hmac")
    run_id, runner = make_run()
    first = ask(runner, run_id, "send_email", {"to": "a@b.c"})["approval"]["id"]

    approval_notify_all(approval_id=int(first))

    delivery = NotificationDelivery.objects.get(approval_id=first)
    assert delivery.status == "pending" and delivery.attempts == 1
    assert "EgressRefused" in delivery.last_error and "loopback" in delivery.last_error
    assert internal_receiver.attempts == 0  # nothing reached the internal server

    org_allowed_hosts_set(org=org, text=INTERNAL)
    second = ask(runner, run_id, "send_email", {"to": "d@e.f"}, call_id="c-2")
    approval_notify_all(approval_id=int(second["approval"]["id"]))

    assert NotificationDelivery.objects.get(approval_id=second["approval"]["id"]).status == "sent"
    assert internal_receiver.attempts == 1


@pytest.mark.django_db(transaction=True)
def test_an_audit_sink_on_an_internal_address_gets_nothing_until_the_org_allows_it(
    org, make_run, internal_receiver
):
    sink = sink_create(
        org=org,
        name="internal",
        kind="jsonl",
        url=f"http://{INTERNAL}:{internal_receiver.port}/ingest",
        token="sink-token-0123",
    )
    run_id, _ = make_run()

    sinks_deliver()

    sink.refresh_from_db()
    assert sink.failed_attempts == 1
    assert "loopback" in sink.last_error
    assert internal_receiver.attempts == 0

    org_allowed_hosts_set(org=org, text=INTERNAL)
    AuditSink.objects.filter(pk=sink.pk).update(next_attempt_at=None)
    while sinks_deliver().delivered:
        pass
    assert len(internal_receiver.lines()) == Event.objects.filter(run_id=run_id).count() > 0
