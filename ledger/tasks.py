"""The worker's side of the auditor's ledger: sequence new events, sign due checkpoints,
push them to witnesses. `sequencer_run` is scheduled every minute and keeps one worker
process ticking for `FLUIDBOX_SEQUENCER_SECONDS`, so checkpoints follow within a second of
their N-th event rather than at the scheduler's minute."""

import logging
import time

from django.conf import settings
from django.db import close_old_connections

from governance.vault import VaultError
from ledger.chain_checks import break_text, ledger_check
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
    """Tick until `seconds` have passed (the scheduled task); returns the leaves added.

    One database connection for the whole run, not one per tick: a new PostgreSQL backend
    costs more CPU than an idle round. Between ticks it is idle outside any transaction, so
    it holds no snapshot back; after a failed round it is dropped and the next tick opens
    a fresh one."""
    deadline = time.monotonic() + (seconds or settings.FLUIDBOX_SEQUENCER_SECONDS)
    leaves = 0
    close_old_connections()
    try:
        while True:
            try:
                leaves += sequencer_tick()["leaves"]
            except Exception:  # the loop outlives one bad round; the next tick retries
                logger.exception("ledger sequencer round failed")
                close_old_connections()
            if time.monotonic() + TICK_SECONDS >= deadline:
                return leaves
            time.sleep(TICK_SECONDS)
    finally:
        close_old_connections()


def ledger_check_run() -> int | None:
    """The scheduled check of the whole ledger; the problems it found (None: one was running)."""
    done = ledger_check(by="worker", unless_running=True)
    if done is None:
        return None
    if done.breaks:
        logger.error(
            "ledger check found %d problem(s), the first: %s",
            len(done.breaks),
            break_text(done.breaks[0]),
        )
    return len(done.breaks)
