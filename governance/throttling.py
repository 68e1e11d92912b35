"""A cap on the long requests one credential may hold at once: approval waits and event
streams each park a web thread for up to 30 s, so one token opening twenty of them could
hold every thread of a small server and stall everyone else.

Slots live in the database (`WaitSlot`), so the cap holds across every web process and
machine: a credential takes one of its `FLUIDBOX_WAITS_PER_CREDENTIAL` numbered slots by
inserting it (the unique index lets exactly one taker win) or by taking over an expired one
with a compare-and-swap on its expiry. A slot is released when the request ends; one whose
process died frees itself at its expiry. No slot free: 429 with `Retry-After`.
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


def _acquire(credential: str, cap: int, seconds: float) -> uuid.UUID | None:
    now = timezone.now()
    holder = uuid.uuid4()
    expires_at = now + timedelta(seconds=seconds + EXPIRY_MARGIN_SECONDS)
    held = dict(WaitSlot.objects.filter(credential=credential).values_list("slot", "expires_at"))
    for slot in range(cap):
        if slot not in held:
            try:
                with transaction.atomic():
                    WaitSlot.objects.create(
                        credential=credential, slot=slot, holder=holder, expires_at=expires_at
                    )
                return holder
            except IntegrityError:
                continue  # taken a moment ago by another request
        elif held[slot] <= now:
            # Expired: its holder died. Take it over only if nobody else did meanwhile.
            taken = WaitSlot.objects.filter(
                credential=credential, slot=slot, expires_at=held[slot]
            ).update(holder=holder, expires_at=expires_at)
            if taken:
                return holder
    return None


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


def wait_slot_take(credential: str, *, seconds: float) -> uuid.UUID:
    """Take a slot for a long request of up to `seconds`; raises TooManyRequests (429)."""
    cap = settings.FLUIDBOX_WAITS_PER_CREDENTIAL
    holder = _acquire(credential, cap, seconds)
    if holder is None:
        retry_after = _retry_after(credential)
        raise TooManyRequests(
            f"this credential already holds {cap} approval waits or event streams "
            f"(FLUIDBOX_WAITS_PER_CREDENTIAL); retry in {retry_after} s",
            retry_after=retry_after,
        )
    return holder


def wait_slot_release(holder: uuid.UUID) -> None:
    WaitSlot.objects.filter(holder=holder).delete()


@contextmanager
def wait_slot(credential: str, *, seconds: float) -> Iterator[None]:
    holder = wait_slot_take(credential, seconds=seconds)
    try:
        yield
    finally:
        wait_slot_release(holder)
