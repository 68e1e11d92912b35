"""A notification retried after its approval was decided is not sent: the approver would be
called, minutes later, to decide what is already decided, with the call's arguments again.

A webhook that refused the first attempt got the retry five seconds to minutes later,
whatever had happened meanwhile: "approval needed" for an approval another approver had
approved, or one the timeout had settled.
"""

import pytest

from governance.models import NotificationDelivery
from governance.services.notifications import approval_notify_all, channel_create_webhook
from governance.tasks import notification_deliver
from tests.conftest import Api
from tests.governance.gate.test_pipeline import ask
from tests.governance.test_notifications import SECRET, Receiver


@pytest.fixture
def refused_once(org, make_run):
    """A webhook that refused the first attempt at an approval's notification: (the receiver,
    the approval's id)."""
    receiver = Receiver(fail_first=1)
    channel_create_webhook(org=org, name="pager", url=receiver.url, secret=SECRET)
    run_id, runner = make_run()
    approval_id = ask(runner, run_id, "send_email", {"to": "a@b.c"})["approval"]["id"]
    approval_notify_all(approval_id=int(approval_id))
    yield receiver, approval_id
    receiver.close()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("decision", ["approve", "deny"])
def test_a_retry_falling_due_after_the_decision_sends_nothing(refused_once, approver, decision):
    receiver, approval_id = refused_once
    delivery = NotificationDelivery.objects.get()
    assert (delivery.status, delivery.attempts) == ("pending", 1)  # a retry is queued

    decided = Api(user=approver).post(
        f"/v1/approvals/{approval_id}/decision", {"decision": decision}
    )
    assert decided.status_code == 200, decided.content
    notification_deliver(delivery.pk)  # the retry, as the worker runs it

    assert receiver.received == []
    delivery.refresh_from_db()
    assert delivery.status == "failed" and delivery.attempts == 1
    assert "already decided" in delivery.last_error


@pytest.mark.django_db(transaction=True)
def test_a_retry_while_the_approval_still_waits_is_sent(refused_once):
    receiver, _ = refused_once
    notification_deliver(NotificationDelivery.objects.get().pk)

    assert len(receiver.received) == 1
    assert NotificationDelivery.objects.get().status == "sent"
