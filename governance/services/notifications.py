"""Announcing approval requests: signed webhooks and email, retried with backoff, never in
the way of a decision (they run on the worker, after commit)."""

import hashlib
import hmac
import json
import logging
import time
from datetime import timedelta

import httpx
from django.conf import settings
from django.core.mail import send_mail
from django.utils import timezone

from governance import vault
from governance.egress import guarded_post
from governance.models import (
    Approval,
    ApprovalStatus,
    ChannelKind,
    DeliveryStatus,
    NotificationChannel,
    NotificationDelivery,
)
from governance.notification_text import ApprovalFacts, email_text, quoted, slack_message
from governance.observability import metrics
from governance.queue import task_enqueue_at
from governance.shell_reading import approval_shell_reading

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 5
BACKOFF_SECONDS = (5, 30, 120, 600)
SIGNATURE_HEADER = "X-Fluidbox-Signature"


def approval_page_url(approval: Approval) -> str:
    return f"{settings.PUBLIC_BASE_URL}/admin/inbox/{approval.pk}/"


def approval_facts(approval: Approval) -> ApprovalFacts:
    run = approval.run
    return ApprovalFacts(
        link=approval_page_url(approval),
        approval_id=approval.pk,
        agent=run.agent,
        tool=approval.tool,
        run=str(run.pk),
        trust_tier=run.trust_tier,
        expires=approval.expires_at.isoformat().replace("+00:00", "Z"),
        arguments=approval.call.arguments,
        shell_reading=approval_shell_reading(approval),
    )


def approval_message(approval: Approval) -> dict:
    """The webhook body: Slack-compatible `text` and `blocks` (the genuine link first, the
    agent's words escaped and fenced, see `governance.notification_text`), and the raw call
    under `fluidbox` for programs."""
    facts = approval_facts(approval)
    text, blocks = slack_message(facts)
    return {
        "text": text,
        "blocks": blocks,
        # Slack: no link previews of anything in the message, no @name expansion.
        "unfurl_links": False,
        "unfurl_media": False,
        "link_names": False,
        "fluidbox": {
            # The REST API's id, as `/v1/approvals/{id}/decision` takes it (a string there).
            "approval_id": str(approval.pk),
            "run": facts.run,
            "agent": facts.agent,
            "tool": facts.tool,
            "arguments": facts.arguments,
            "expires_at": facts.expires,
            "url": facts.link,
        },
    }


def approval_email(approval: Approval) -> tuple[str, str]:
    subject = f"[fluidbox] approval needed: {quoted(approval.run.agent)} → {quoted(approval.tool)}"
    return subject, email_text(approval_facts(approval))


def sign(secret: str, body: bytes, timestamp: int) -> str:
    """`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>." + body>`: the time is signed with the
    body, so a receiver can refuse a delivery replayed later (see the README)."""
    signed = f"{timestamp}.".encode() + body
    digest = hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"


def channel_create_webhook(*, org, name: str, url: str, secret: str) -> NotificationChannel:
    return NotificationChannel.objects.create(
        org=org,
        name=name,
        kind=ChannelKind.WEBHOOK,
        url=url,
        secret_sealed=vault.seal_infrastructure(secret),
    )


def approval_notify_all(*, approval_id: int) -> None:
    approval = Approval.objects.select_related("run").filter(pk=approval_id).first()
    if approval is None:
        return
    for channel in NotificationChannel.objects.filter(org_id=approval.run.org_id, is_active=True):
        delivery, _ = NotificationDelivery.objects.get_or_create(channel=channel, approval=approval)
        if delivery.status == DeliveryStatus.PENDING:
            delivery_attempt(delivery_id=delivery.pk)


def _send(channel: NotificationChannel, approval: Approval) -> None:
    if channel.kind == ChannelKind.WEBHOOK:
        body = json.dumps(approval_message(approval), ensure_ascii=False).encode("utf-8")
        secret = vault.unseal_infrastructure(channel.secret_sealed)
        # Signed at each attempt: a retry carries its own time, not the first attempt's.
        signature = sign(secret, body, int(time.time()))
        response = guarded_post(
            channel.org,
            channel.url,
            content=body,
            headers={"Content-Type": "application/json", SIGNATURE_HEADER: signature},
            timeout=5.0,
        )
        response.raise_for_status()
    else:
        recipients = [line.strip() for line in channel.emails.splitlines() if line.strip()]
        subject, body = approval_email(approval)
        send_mail(subject=subject, message=body, from_email=None, recipient_list=recipients)


def _failure(error: Exception) -> str:
    # httpx's message names the URL, and a webhook's path is often its secret (Slack's
    # /services/T…/B…/…): the status is what went wrong.
    if isinstance(error, httpx.HTTPStatusError):
        response = error.response
        return f"HTTPStatusError: {response.status_code} {response.reason_phrase}"
    return f"{type(error).__name__}: {str(error)[:250]}"


def _not_sent(delivery: NotificationDelivery, why: str) -> None:
    """Ends a pending delivery unsent, unless an attempt claimed it meanwhile."""
    NotificationDelivery.objects.filter(
        pk=delivery.pk, status=DeliveryStatus.PENDING, attempts=delivery.attempts
    ).update(status=DeliveryStatus.FAILED, last_error=f"not sent: {why}")


def delivery_attempt(*, delivery_id: int) -> None:
    delivery = (
        NotificationDelivery.objects.select_related("channel", "approval__run", "approval__call")
        .filter(pk=delivery_id)
        .first()
    )
    if delivery is None or delivery.status != DeliveryStatus.PENDING:
        return
    if not delivery.channel.is_active:
        # A retry falls due minutes later: the channel's admin may have switched it off
        # since (the receiver is the wrong one, or no longer wanted), and then nothing more
        # goes there, the approval's full arguments least of all.
        _not_sent(delivery, "the channel was switched off")
        return
    if delivery.attempts and delivery.approval.status != ApprovalStatus.PENDING:
        # A retry falls due seconds to minutes later: the approval may be decided (or timed
        # out) by then, and an approver called to decide it would find nothing to decide.
        # (The first attempt goes out whatever: one notification per approval asked for.)
        _not_sent(delivery, f"the approval was already decided ({delivery.approval.status})")
        return
    attempts = delivery.attempts + 1
    # Each attempt claims the delivery (pending → sending) by compare-and-swap: the same task
    # run again while it sends (a worker past the broker's retry time, a duplicate) sends
    # nothing. A worker that dies mid-send leaves it `sending`, as it was left unretried.
    claimed = NotificationDelivery.objects.filter(
        pk=delivery_id, status=DeliveryStatus.PENDING, attempts=delivery.attempts
    ).update(attempts=attempts, status=DeliveryStatus.SENDING)
    if not claimed:
        return
    try:
        _send(delivery.channel, delivery.approval)
    except Exception as error:  # any failure is retried; none reaches the decision path
        failure = _failure(error)
        logger.warning("notification %s attempt %s failed: %s", delivery_id, attempts, failure)
        failed = attempts >= MAX_ATTEMPTS
        metrics.notification_attempted(
            channel=delivery.channel.kind, outcome="failed" if failed else "retrying"
        )
        NotificationDelivery.objects.filter(pk=delivery_id).update(
            last_error=failure,
            status=DeliveryStatus.FAILED if failed else DeliveryStatus.PENDING,
        )
        if not failed:
            delay = BACKOFF_SECONDS[min(attempts - 1, len(BACKOFF_SECONDS) - 1)]
            task_enqueue_at(
                timezone.now() + timedelta(seconds=delay),
                "governance.tasks.notification_deliver",
                delivery_id,
            )
        return
    NotificationDelivery.objects.filter(pk=delivery_id).update(
        status=DeliveryStatus.SENT, sent_at=timezone.now(), last_error=""
    )
    metrics.notification_attempted(channel=delivery.channel.kind, outcome="sent")
