"""Approval notifications reach a real webhook receiver, signed, with the exact arguments."""

import hashlib
import hmac
import json
import threading
import time
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core import mail
from django.utils import timezone
from django_q.models import OrmQ

from governance.models import NotificationDelivery
from governance.services.notifications import approval_notify_all, channel_create_webhook
from tests.governance.gate.test_pipeline import ask
from tests.support.servers import Worker
from tests.support.waiting import wait_until

SECRET = "webhook-signing-secret-123"


class Receiver:
    def __init__(self, fail_first: int = 0) -> None:
        self.received: list[tuple[dict, bytes]] = []
        self.fail_first = fail_first
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if receiver.fail_first > 0:
                    receiver.fail_first -= 1
                    self.send_response(503)
                    self.end_headers()
                    return
                receiver.received.append((dict(self.headers), body))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()


@pytest.fixture
def receiver():
    server = Receiver()
    yield server
    server.close()


def verify(headers: dict, body: bytes) -> bool:
    fields = dict(part.split("=", 1) for part in headers["X-Fluidbox-Signature"].split(","))
    signed = f"{fields['t']}.".encode() + body
    expected = hmac.new(SECRET.encode(), signed, hashlib.sha256).hexdigest()
    fresh = abs(time.time() - int(fields["t"])) <= 300
    return fresh and hmac.compare_digest(fields["v1"], expected)


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_the_worker_posts_a_signed_webhook_with_the_exact_arguments(
    org, make_run, receiver, tmp_path
):
    channel_create_webhook(org=org, name="ops", url=receiver.url, secret=SECRET)
    with Worker(tmp_path):
        run_id, runner = make_run()
        tricky = "bob@example.com\u200b; cc: mallory@evil.example"
        answer = ask(runner, run_id, "send_email", {"to": tricky, "body": "quarterly numbers"})
        assert answer["decision"] == "pending"
        wait_until(lambda: receiver.received, "the worker to post the webhook")
    assert len(receiver.received) == 1
    headers, body = receiver.received[0]
    assert verify(headers, body)
    message = json.loads(body)
    assert "send_email" in message["text"]
    assert "bob@example.com\\u200b; cc: mallory@evil.example" in message["text"]
    assert "quarterly numbers" in message["text"]
    assert "triage-bot" in message["text"]
    assert run_id in message["text"]
    assert f"/admin/inbox/{answer['approval']['id']}/" in message["text"]
    assert message["fluidbox"]["arguments"]["to"] == tricky
    # A program acting on the webhook uses its id as the REST API gives it.
    assert message["fluidbox"]["approval_id"] == answer["approval"]["id"]


@pytest.mark.django_db
def test_a_tampered_body_fails_verification(org, make_run, receiver):
    channel_create_webhook(org=org, name="ops", url=receiver.url, secret=SECRET)
    run_id, runner = make_run()
    approval_id = ask(runner, run_id, "send_email", {"to": "a@b.c"})["approval"]["id"]
    approval_notify_all(approval_id=int(approval_id))
    headers, body = receiver.received[0]
    assert verify(headers, body)
    assert not verify(headers, body.replace(b"a@b.c", b"a@evil.c"))


@pytest.mark.django_db
def test_a_failing_channel_is_retried_and_never_blocks_the_decision(org, make_run, approver):
    from governance.models import NotificationChannel
    from tests.conftest import Api

    failing = Receiver(fail_first=10)
    try:
        channel_create_webhook(org=org, name="down", url=failing.url, secret=SECRET)
        NotificationChannel.objects.create(
            org=org, name="mail", kind="email", emails="ops@example.com"
        )
        run_id, runner = make_run()
        approval_id = ask(runner, run_id, "send_email", {"to": "a@b.c"})["approval"]["id"]
        before = timezone.now()
        approval_notify_all(approval_id=int(approval_id))
        after = timezone.now()
        webhook = NotificationDelivery.objects.get(channel__kind="webhook")
        assert (webhook.status, webhook.attempts) == ("pending", 1)
        # The retry is queued to fall due 5 s later (the first backoff), not at a scheduler tick.
        deliver = "governance.tasks.notification_deliver"
        retries = [q for q in OrmQ.objects.all() if q.task["func"] == deliver]
        assert [q.task["args"] for q in retries] == [(webhook.pk,)]
        assert before + timedelta(seconds=5) <= retries[0].lock <= after + timedelta(seconds=5)
        assert "503" in webhook.last_error
        assert NotificationDelivery.objects.get(channel__kind="email").status == "sent"
        assert "send_email" in mail.outbox[0].body
        decided = Api(user=approver).post(
            f"/v1/approvals/{approval_id}/decision", {"decision": "approve"}
        )
        assert decided.status_code == 200
    finally:
        failing.close()


@pytest.mark.django_db(transaction=True)
def test_an_attempt_run_twice_at_once_sends_one_notification(org, make_run, receiver):
    """The same delivery attempted by two workers at once (a task the broker handed out
    again while its first run was still sending): one POST, the other sends nothing."""
    from django.db import connections

    from governance.models import Approval
    from governance.services.notifications import delivery_attempt

    channel = channel_create_webhook(org=org, name="ops", url=receiver.url, secret=SECRET)
    run_id, runner = make_run()
    approval_id = ask(runner, run_id, "send_email", {"to": "a@b.c"})["approval"]["id"]
    delivery = NotificationDelivery.objects.create(
        channel=channel, approval=Approval.objects.get(pk=approval_id)
    )
    entered, release = threading.Event(), threading.Event()
    held = receiver.server.RequestHandlerClass.do_POST

    def slow_post(handler):
        entered.set()
        release.wait(timeout=300)
        held(handler)

    receiver.server.RequestHandlerClass.do_POST = slow_post

    def attempt():
        try:
            delivery_attempt(delivery_id=delivery.pk)
        finally:
            connections.close_all()

    first = threading.Thread(target=attempt)
    first.start()
    assert entered.wait(timeout=300)  # the first attempt is sending
    second = threading.Thread(target=attempt)
    second.start()
    second.join()  # it returns without sending: the attempt was claimed
    release.set()
    first.join()
    assert len(receiver.received) == 1
    delivery.refresh_from_db()
    # One attempt counted ("sent"; "pending" again only if the held POST outlived the 5 s
    # send timeout on a very busy machine, its retry then queued).
    assert delivery.attempts == 1 and delivery.status in ("sent", "pending")
