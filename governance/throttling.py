"""A cap on the long requests one credential may hold at once: approval waits and event
streams each park a web thread for up to 30 s, so one token opening twenty of them could
hold every thread of a small server and stall everyone else.

Slots live in the database (`WaitSlot`), so the cap holds across every web process and
machine: a credential takes one of its `FLUIDBOX_WAITS_PER_CREDENTIAL` numbered slots by
inserting it (the unique index lets exactly one taker win) or by taking over an expired one
with a compare-and-swap on its expiry. A slot is released when the request ends; one whose
process died frees itself at its expiry. No slot free: 429 with `Retry-After`.

A credential is cheap to come by (each run a person starts has a token of its own), so each
long request also takes one of its organization's `FLUIDBOX_WAITS_PER_ORG` slots: one
tenant's members cannot park every thread of the server and stall the others.
"""

import math
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from governance.authentication import Actor, ActorKind
from governance.errors import TooManyRequests
from governance.models import WaitSlot

# Past the longest wait or stream, so a live holder never loses its slot to a taker.
EXPIRY_MARGIN_SECONDS = 10
MAX_RETRY_AFTER_SECONDS = 10


def credential_key(actor: Actor) -> str:
    """The credential a request came with: a run token, an API key, or a person's session."""
    if actor.kind == ActorKind.RUNNER:
        return f"run:{actor.run_id}"
    if actor.api_key_id is not None:
        return f"key:{actor.api_key_id}"
    return f"user:{actor.user.pk}"


def _acquire(credential: str, cap: int, seconds: float, holder: uuid.UUID) -> bool:
    now = timezone.now()
    expires_at = now + timedelta(seconds=seconds + EXPIRY_MARGIN_SECONDS)
    held = dict(WaitSlot.objects.filter(credential=credential).values_list("slot", "expires_at"))
    for slot in range(cap):
        if slot not in held:
            try:
                with transaction.atomic():
                    WaitSlot.objects.create(
                        credential=credential, slot=slot, holder=holder, expires_at=expires_at
                    )
                return True
            except IntegrityError:
                continue  # taken a moment ago by another request
        elif held[slot] <= now:
            # Expired: its holder died. Take it over only if nobody else did meanwhile.
            taken = WaitSlot.objects.filter(
                credential=credential, slot=slot, expires_at=held[slot]
            ).update(holder=holder, expires_at=expires_at)
            if taken:
                return True
    return False


def _retry_after(credential: str) -> int:
    soonest = (
        WaitSlot.objects.filter(credential=credential)
        .order_by("expires_at")
        .values_list("expires_at", flat=True)
        .first()
    )
    if soonest is None:
        return 1
    remaining = (soonest - timezone.now()).total_seconds() - EXPIRY_MARGIN_SECONDS
    return max(1, min(MAX_RETRY_AFTER_SECONDS, math.ceil(remaining)))


def wait_slot_take(credential: str, *, seconds: float, org_id: int) -> uuid.UUID:
    """Take a slot of the credential and one of its organization for a long request of up
    to `seconds`; raises TooManyRequests (429). One holder for both: released together."""
    holder = uuid.uuid4()
    cap = settings.FLUIDBOX_WAITS_PER_CREDENTIAL
    if not _acquire(credential, cap, seconds, holder):
        retry_after = _retry_after(credential)
        raise TooManyRequests(
            f"this credential already holds {cap} approval waits or event streams "
            f"(FLUIDBOX_WAITS_PER_CREDENTIAL); retry in {retry_after} s",
            retry_after=retry_after,
        )
    org_cap, org = settings.FLUIDBOX_WAITS_PER_ORG, f"org:{org_id}"
    if not _acquire(org, org_cap, seconds, holder):
        wait_slot_release(holder)
        retry_after = _retry_after(org)
        raise TooManyRequests(
            f"this organization's credentials already hold {org_cap} approval waits or "
            f"event streams (FLUIDBOX_WAITS_PER_ORG); retry in {retry_after} s",
            retry_after=retry_after,
        )
    return holder


def wait_slot_release(holder: uuid.UUID) -> None:
    WaitSlot.objects.filter(holder=holder).delete()


@contextmanager
def wait_slot(credential: str, *, seconds: float, org_id: int) -> Iterator[None]:
    holder = wait_slot_take(credential, seconds=seconds, org_id=org_id)
    try:
        yield
    finally:
        wait_slot_release(holder)
