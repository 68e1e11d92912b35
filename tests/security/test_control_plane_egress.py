"""Approval webhooks and audit sinks send from inside the deployment to a URL an
organization's admin typed: the same egress rules as connections hold for them. An
internal address is refused when the webhook or sink is saved, and again before a socket
opens on every delivery (the allow-list may shrink, a name may resolve elsewhere later),
until the organization's allow-list names it."""

import pytest

from governance.errors import Invalid
from governance.models import NotificationChannel, NotificationDelivery
from governance.services.channels import channel_create, channel_update
from governance.services.notifications import approval_notify_all
from governance.services.orgs import org_allowed_hosts_set
from ledger.models import AuditSink, Event
from ledger.sinks import sink_create, sink_update
from ledger.streaming import sinks_deliver
from tests.conftest import Api
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
    org_allowed_hosts_set(org=org, text=INTERNAL)
    channel_create(org=org, name="internal", kind="webhook", url=url, secret="s3cret-for-hmac")
    org_allowed_hosts_set(org=org, text="")  # withdrawn after the save
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
    org_allowed_hosts_set(org=org, text=INTERNAL)
    sink = sink_create(
        org=org,
        name="internal",
        kind="jsonl",
        url=f"http://{INTERNAL}:{internal_receiver.port}/ingest",
        token="sink-token-0123",
    )
    org_allowed_hosts_set(org=org, text="")  # withdrawn after the save
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


SINK_ADD = "/admin/ledger/auditsink/add/"
CHANNEL_ADD = "/admin/governance/notificationchannel/add/"
# Internal addresses, each named as the admin would type it.
INTERNAL_URLS = [
    "http://127.0.0.2:9/x",
    "https://10.1.2.3/ingest",
    "https://169.254.169.254/latest/meta-data/",
    "https://[::ffff:127.0.0.2]/x",
    "https://[fd00:ec2::254]/x",
    "https://0x7f.2/x",  # 127.0.0.2, as the resolver reads it (the tests allow 127.0.0.1)
    "https://2130706434/x",
]


def sink_form(org, url):
    data = {"org": org.pk, "name": "siem", "kind": "jsonl", "is_active": "on"}
    return {**data, "max_backlog": 1000, "url": url, "token": ""}


def channel_form(org, url):
    data = {"org": org.pk, "name": "hook", "kind": "webhook", "is_active": "on"}
    return {**data, "url": url, "secret": "s3cret-for-hmac", "emails": ""}


@pytest.mark.django_db
@pytest.mark.parametrize("url", INTERNAL_URLS)
def test_a_sink_or_webhook_on_an_internal_address_is_refused_when_saved(org, admin_user, url):
    client = Api(user=admin_user).client
    for path, form in ((SINK_ADD, sink_form), (CHANNEL_ADD, channel_form)):
        refused = client.post(path, form(org, url))
        assert refused.status_code == 200, refused.status_code
        page = refused.content.decode()
        # Django's URL field already refuses the numeric spellings of an address.
        assert "allowed hosts" in page or "Enter a valid URL" in page
    assert not AuditSink.objects.exists() and not NotificationChannel.objects.exists()
    # Whoever calls the services: refused the same way.
    with pytest.raises(Invalid, match="allowed hosts") as refused:
        sink_create(org=org, name="siem", kind="jsonl", url=url)
    assert refused.value.code == "address_refused"
    with pytest.raises(Invalid, match="allowed hosts"):
        channel_create(org=org, name="hook", kind="webhook", url=url, secret="s3cret-for-hmac")
    assert not AuditSink.objects.exists() and not NotificationChannel.objects.exists()


@pytest.mark.django_db
def test_an_internal_address_the_org_allows_is_saved(org, admin_user):
    org_allowed_hosts_set(org=org, text="10.1.0.0/16")
    client = Api(user=admin_user).client
    assert client.post(SINK_ADD, sink_form(org, "https://10.1.2.3/ingest")).status_code == 302
    assert client.post(CHANNEL_ADD, channel_form(org, "https://10.1.2.3/hook")).status_code == 302
    assert AuditSink.objects.get(org=org).url == "https://10.1.2.3/ingest"
    assert NotificationChannel.objects.get(org=org).url == "https://10.1.2.3/hook"


@pytest.mark.django_db
def test_moving_a_sink_or_webhook_to_an_internal_address_is_refused(org, admin_user):
    sink = sink_create(org=org, name="siem", kind="jsonl", url="https://siem.example.com/x")
    channel = channel_create(
        org=org, name="hook", kind="webhook", url="https://hooks.example.com/x", secret="s3cret"
    )
    client = Api(user=admin_user).client
    moved = client.post(
        f"/admin/ledger/auditsink/{sink.pk}/change/",
        {"url": "https://169.254.169.254/x", "token": "", "is_active": "on", "max_backlog": 1000},
    )
    assert moved.status_code == 200 and "link-local" in moved.content.decode()
    with pytest.raises(Invalid, match="link-local"):
        sink_update(sink=sink, url="https://169.254.169.254/x", is_active=True, max_backlog=10)
    with pytest.raises(Invalid, match="loopback"):
        channel_update(channel=channel, name="hook", is_active=True, url="https://127.0.0.5/x")
    sink.refresh_from_db()
    channel.refresh_from_db()
    assert sink.url == "https://siem.example.com/x"
    assert channel.url == "https://hooks.example.com/x"
    # A sink whose URL stays as it is saves, whatever its address: deliveries check it.
    kept = sink_update(sink=sink, url=sink.url, is_active=False, max_backlog=10)
    assert kept.is_active is False
