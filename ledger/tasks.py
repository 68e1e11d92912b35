"""The worker's side of the auditor's ledger: sequence new events, sign due checkpoints,
push them to witnesses. `sequencer_run` is scheduled every minute and keeps one worker
process ticking for `FLUIDBOX_SEQUENCER_SECONDS`, so checkpoints follow within a second of
their N-th event rather than at the scheduler's minute."""

import logging
import time

from django.conf import settings
from django.db import close_old_connections

from governance.vault import VaultError
from ledger.checkpoints import CheckpointRefused, checkpoint_sign, logs_due
from ledger.publishing import publications_attempt_due
from ledger.sequencer import sequence

logger = logging.getLogger(__name__)

TICK_SECONDS = 1.0


def sequencer_tick() -> dict:
    """One round: leaves for new events, the checkpoints now due, the witnesses now due."""
    sequenced = sequence()
    signed = 0
    for log in logs_due():
        try:
            signed += checkpoint_sign(log=log) is not None
        except VaultError as error:
            logger.warning("cannot sign %s: %s", log.origin, error)
        except CheckpointRefused:
            logger.exception("refusing to sign a checkpoint for %s", log.origin)
    published = publications_attempt_due()
    return {
        "leaves": sequenced.leaves if sequenced else 0,
        "checkpoints": signed,
        "publications": published,
    }


def sequencer_run(seconds: float | None = None) -> int:
    """Tick until `seconds` have passed (the scheduled task); returns the leaves added."""
    deadline = time.monotonic() + (seconds or settings.FLUIDBOX_SEQUENCER_SECONDS)
    leaves = 0
    while True:
        close_old_connections()
        try:
            leaves += sequencer_tick()["leaves"]
        except Exception:  # the loop outlives one bad round; the next tick retries
            logger.exception("ledger sequencer round failed")
        if time.monotonic() + TICK_SECONDS >= deadline:
            return leaves
        time.sleep(TICK_SECONDS)
