"""Review 56: outbound deliveries (approval webhooks, audit sinks) from the receiver's and
the organization admin's side."""

import pytest

from governance.models import NotificationDelivery
from governance.services.channels import channel_update
from governance.services.notifications import (
    approval_notify_all,
    channel_create_webhook,
    delivery_attempt,
)
from tests.governance.gate.test_pipeline import ask
from tests.governance.test_notifications import SECRET, Receiver


@pytest.mark.django_db
def test_a_retry_never_reaches_a_channel_its_admin_switched_off(org, make_run):
    """An admin switches a webhook channel off (its receiver was answering 503, or the URL
    turned out to be the wrong team's): the retries already queued for it must not post the
    approval's full arguments there any more. Before the fix, the queued retry sent it
    anyway, because an attempt never looked at the channel's `is_active`."""
    receiver = Receiver(fail_first=1)
    try:
        channel = channel_create_webhook(org=org, name="ops", url=receiver.url, secret=SECRET)
        run_id, runner = make_run()
        approval_id = ask(runner, run_id, "send_email", {"to": "a@b.c"})["approval"]["id"]
        approval_notify_all(approval_id=int(approval_id))
        delivery = NotificationDelivery.objects.get(channel=channel)
        assert (delivery.status, delivery.attempts) == ("pending", 1)

        channel_update(channel=channel, name="ops", is_active=False, url=receiver.url)
        delivery_attempt(delivery_id=delivery.pk)  # the retry the worker had queued

        assert receiver.received == []  # nothing reached the switched-off channel
        delivery.refresh_from_db()
        assert delivery.status == "failed"
        assert delivery.attempts == 1
        assert "switched off" in delivery.last_error
    finally:
        receiver.close()
