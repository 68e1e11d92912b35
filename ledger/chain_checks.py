"""Checking the ledger as stored, online: each run's chain (seq, links, hashes), each event
against the Merkle leaf the log gave it, the leaves against the latest signed checkpoint,
and leaves whose event is gone. `manage.py ledger verify` and the run page's verdict ask
these; the offline verifier (`ledger/verify/`) checks an exported bundle instead."""

from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db.models import Exists, OuterRef
from django.utils import timezone

from governance.observability import metrics
from governance.vault import VaultError
from ledger.log_models import LedgerCheck, LogLeaf, OrgLog, SequencedRun
from ledger.models import GENESIS_HASH, Event, RunCounter
from ledger.services import event_hash
from ledger.tree import TreeReader, TreeStorageError
from ledger.verify.after_finish import AfterFinish
from ledger.verify.events import event_leaf_hash
from ledger.verify.merkle import CompactRange, ProofError, verify_inclusion
from ledger.verify.note import Checkpoint as SignedCheckpoint
from ledger.verify.note import NoteError


def leaf_of_event_hash(digest: str) -> bytes | None:
    """The Merkle leaf an event with this chain hash has; None for a hash that is not one
    (a row written past the append-only triggers may hold anything)."""
    try:
        return event_leaf_hash(digest) if len(digest) == 64 else None
    except ValueError:
        return None


@dataclass(frozen=True)
class ChainBreak:
    run_id: str
    seq: int
    problem: str


@dataclass(frozen=True)
class LogBreak:
    origin: str
    problem: str


# What the walk reads of each event: the row and the Merkle leaf the log gave it (a LEFT
# JOIN through the unique leaf-per-event index: one streamed query, whatever the count).
_WALKED = ("run_id", "seq", "type", "at", "data", "prev_hash", "hash", "leaf__index", "leaf__hash")


class _RunWalk:
    """One run's chain checked event by event: seq, links, hashes, and each event's hash
    against its Merkle leaf. `end` then checks what the run's other rows say of its length."""

    def __init__(self, run_id, prove=None) -> None:
        self.key = run_id  # as the database gave it
        self.run_id = str(run_id)
        self.breaks: list[ChainBreak] = []
        self.prev_hash = GENESIS_HASH
        self.expected_seq = 1
        self.leafless: int | None = None  # the first seq without a leaf
        self.after_finish = AfterFinish()
        self.prove = prove  # (seq, leaf index, leaf hash) -> problem or None

    def _break(self, seq: int, problem: str) -> None:
        self.breaks.append(ChainBreak(self.run_id, seq, problem))

    def event(self, run_id, seq, type, at, data, prev_hash, digest, leaf_index, leaf) -> None:
        if seq != self.expected_seq:
            self._break(self.expected_seq, f"gap: expected seq {self.expected_seq}, found {seq}")
            self.expected_seq = seq
        if prev_hash != self.prev_hash:
            self._break(seq, "prev_hash does not link")
        recomputed = event_hash(
            prev_hash=prev_hash, run_id=run_id, seq=seq, type=type, at=at, data=data
        )
        if recomputed != digest:
            self._break(seq, "hash mismatch: row was altered")
        if leaf is None:
            self.leafless = self.leafless or seq
        else:
            if self.leafless is not None:
                # The log takes a run's events in seq order: a gap in its leaves was made.
                self._break(
                    self.leafless,
                    f"no Merkle leaf, yet seq {seq} after it has one (leaf {leaf_index}): "
                    "a leaf was deleted",
                )
                self.leafless = None
            self._leaf(seq, digest, leaf_index, bytes(leaf))
        problem = self.after_finish.event(seq, type, data)
        if problem:
            self._break(seq, problem)
        self.prev_hash = digest
        self.expected_seq = seq + 1

    def _leaf(self, seq: int, digest: str, index: int, leaf: bytes) -> None:
        if leaf != leaf_of_event_hash(digest):
            self._break(
                seq,
                f"the event's hash is not the one its Merkle leaf {index} holds: "
                "the row was rewritten after the log took it",
            )
        elif self.prove is not None:
            problem = self.prove(seq, index, leaf)
            if problem:
                self._break(seq, problem)

    def end(self, *, counted: int | None, sequenced: int | None, finished: bool) -> None:
        last = self.expected_seq - 1
        if counted is not None and counted != last:
            self._break(
                self.expected_seq,
                f"counter says {counted} events, found {last}: events missing at the end",
            )
        if sequenced is not None and sequenced > last:
            self._break(
                last + 1,
                f"the Merkle log holds leaves for seq {last + 1}-{sequenced} of this run, "
                "whose events are missing: orphaned leaves, events deleted",
            )
        if self.leafless is not None and sequenced is not None and self.leafless <= sequenced:
            self._break(
                self.leafless,
                f"no Merkle leaf, yet the log has sequenced this run up to seq {sequenced}: "
                "a leaf was deleted",
            )
        if finished and self.after_finish.finished is None:
            self._break(
                last + 1,
                "the run is finished but its chain holds no run.finished event: "
                "events missing at the end",
            )


def _signed_root(log, checkpoint) -> tuple[bytes | None, str]:
    """The root the checkpoint's note signs, checked against the log's keys this vault made,
    or the reason it cannot be trusted."""
    from ledger.checkpoints import trusted_keys, verifier_key

    try:
        trusted, _ = trusted_keys(log)
    except VaultError as error:
        return None, f"the log's keys cannot be checked ({error}): no checkpoint is trusted"
    try:
        signed = SignedCheckpoint.parse(checkpoint.note)
        signed.note.verified_by([verifier_key(key) for key in trusted])
    except NoteError as error:
        return None, f"the checkpoint of size {checkpoint.tree_size} does not verify: {error}"
    if (signed.origin, signed.size, signed.root) != (
        log.origin,
        checkpoint.tree_size,
        bytes(checkpoint.root),
    ):
        return None, f"the checkpoint of size {checkpoint.tree_size} differs from its signed note"
    return signed.root, ""


def _prover(run_id):
    """Checks each leaf of the run under its log's latest signed checkpoint (an inclusion
    proof from the stored tree, never this process's tile cache), or None with no
    checkpoint to check against. The tiles one proof reads serve the next."""
    from governance.models import Run
    from ledger.checkpoints import latest_checkpoint

    org_id = Run.objects.filter(pk=run_id).values_list("org_id", flat=True).first()
    log = OrgLog.objects.filter(org_id=org_id).first() if org_id is not None else None
    checkpoint = latest_checkpoint(log) if log is not None else None
    if checkpoint is None:
        return None
    size = checkpoint.tree_size
    root, refused = _signed_root(log, checkpoint)
    tree = TreeReader(log, size, cache=None)
    told = []

    def prove(seq: int, index: int, leaf: bytes) -> str | None:
        if index >= size:
            return None  # newer than the checkpoint
        if root is None:
            if told:
                return None
            told.append(True)
            return refused
        try:
            verify_inclusion(leaf, index, size, tree.inclusion(index), root)
        except (ProofError, TreeStorageError) as error:
            return (
                f"leaf {index} is not in the signed checkpoint of size {size} ({error}): "
                "the stored tree was altered"
            )
        return None

    return prove


def chain_verify(run_id, *, prove: bool = True) -> list[ChainBreak]:
    """Every gap, reordering or altered row in one run's chain (empty when intact): each
    event against its Merkle leaf, the leaves the log gave the run against its events, and
    (`prove`) each leaf by an inclusion proof under the latest signed checkpoint."""
    from governance.models import Run, RunStatus

    # What the run's other rows say of its length is read before its events: each is
    # written with (or after) the events it counts, so a live run's later appends and
    # leaves cannot pass for missing events.
    counted = RunCounter.objects.filter(run_id=run_id).values_list("last_seq", flat=True).first()
    sequenced = SequencedRun.objects.filter(run_id=run_id).values_list("seq", flat=True).first()
    finished = Run.objects.filter(pk=run_id, status=RunStatus.FINISHED).exists()
    walk = _RunWalk(run_id, _prover(run_id) if prove else None)
    events = Event.objects.filter(run_id=run_id).order_by("seq").values_list(*_WALKED)
    for row in events.iterator(chunk_size=2000):
        walk.event(*row)
    walk.end(counted=counted, sequenced=sequenced, finished=finished)
    metrics.chain_verified(len(walk.breaks))
    return walk.breaks


@dataclass
class Verified:
    runs: int
    events: int
    leaves: int  # leaves checked against a signed root
    breaks: list  # ChainBreak and LogBreak
    recorded: LedgerCheck | None = None  # by `ledger_check`


def break_text(item: ChainBreak | LogBreak) -> str:
    if isinstance(item, LogBreak):
        return f"log {item.origin}: {item.problem}"
    return f"run {item.run_id}: broken at seq {item.seq}: {item.problem}"


def ledger_verify_all() -> Verified:
    """Every run's chain and every organization's log, streamed: one query walks all the
    events in (run, seq) order with their leaves, one per log walks its leaves.

    With each event matched to its leaf (the chains) and the leaves hashed up to the signed
    root and free of leaves whose event is gone (the logs), every sequenced event is the one
    the log signed."""
    from governance.models import Run, RunStatus

    # Read before the events, as in `chain_verify`.
    counters = dict(RunCounter.objects.values_list("run_id", "last_seq"))
    sequenced = dict(SequencedRun.objects.values_list("run_id", "seq"))
    finished = set(Run.objects.filter(status=RunStatus.FINISHED).values_list("pk", flat=True))
    breaks: list = []
    seen: set = set()
    walk: _RunWalk | None = None

    def close(walk: _RunWalk) -> None:
        run_id = walk.key
        walk.end(
            counted=counters.get(run_id),
            sequenced=sequenced.get(run_id),
            finished=run_id in finished,
        )
        metrics.chain_verified(len(walk.breaks))
        breaks.extend(walk.breaks)

    events = 0
    rows = Event.objects.order_by("run_id", "seq").values_list(*_WALKED)
    for row in rows.iterator(chunk_size=2000):
        if walk is None or row[0] != walk.key:
            if walk is not None:
                close(walk)
            walk = _RunWalk(row[0])
            seen.add(row[0])
        walk.event(*row)
        events += 1
    if walk is not None:
        close(walk)
    # Runs the ledger knows of whose events are all gone.
    for run_id in sorted({*counters, *sequenced, *finished} - seen, key=str):
        close(_RunWalk(run_id))
        seen.add(run_id)
    leaves = 0
    for log in OrgLog.objects.order_by("pk"):
        checked, problems = log_verify(log)
        metrics.log_verified(len(problems))
        leaves += checked
        breaks.extend(problems)
    return Verified(runs=len(seen), events=events, leaves=leaves, breaks=breaks)


MAX_NAMED = 20  # of one kind of problem in one log, the rest counted


def _orphaned(log, count: int, named: list[str]) -> LogBreak:
    more = f" and {count - len(named)} more" if count > len(named) else ""
    return LogBreak(
        log.origin,
        f"{count} leaf/leaves whose event is missing (events deleted): "
        f"leaf {', leaf '.join(named)}{more}",
    )


def log_orphans(log) -> list[LogBreak]:
    """The leaves of one organization's log whose event is gone, named: one anti-join in
    the database, for a check of one run (whose deleted events' leaves no longer say which
    run they were of)."""
    orphaned = LogLeaf.objects.filter(log=log).filter(
        ~Exists(Event.objects.filter(pk=OuterRef("event_id")))
    )
    found = list(orphaned.order_by("index").values_list("index", "event_id")[:MAX_NAMED])
    if not found:
        return []
    count = orphaned.count() if len(found) == MAX_NAMED else len(found)
    return [_orphaned(log, count, [f"{index} (event id {event_id})" for index, event_id in found])]


def log_verify(log) -> tuple[int, list[LogBreak]]:
    """One organization's stored leaves, streamed in index order: numbered 0…size-1 without
    a gap, each with its event (a leaf whose event is missing is one the database lost or
    had deleted), and the first ones hashing up to the latest signed checkpoint's root.
    Returns how many leaves were checked against that root, and the problems."""
    from ledger.checkpoints import latest_checkpoint, trusted_keys

    problems: list[LogBreak] = []
    try:
        _, untrusted = trusted_keys(log)
    except VaultError:
        untrusted = []  # `_signed_root` below says the keys could not be checked
    problems += [LogBreak(log.origin, said) for said in untrusted]
    checkpoint = latest_checkpoint(log)
    size, root = 0, None
    if checkpoint is not None:
        size = checkpoint.tree_size
        root, refused = _signed_root(log, checkpoint)
        if root is None:
            problems.append(LogBreak(log.origin, refused))
    tree = CompactRange()
    orphans: list[str] = []
    orphaned = 0
    expected = 0
    leaves = (
        LogLeaf.objects.filter(log=log)
        .annotate(has_event=Exists(Event.objects.filter(pk=OuterRef("event_id"))))
        .order_by("index")
        .values_list("index", "hash", "event_id", "has_event")
    )
    for index, digest, event_id, has_event in leaves.iterator(chunk_size=5000):
        if index != expected:
            problems.append(
                LogBreak(log.origin, f"leaves jump from {expected - 1} to {index}: leaves missing")
            )
            expected = index
        if not has_event:
            orphaned += 1
            if len(orphans) < MAX_NAMED:
                orphans.append(f"{index} (event id {event_id})")
        if index < size:
            tree.append(bytes(digest))
        expected += 1
    if orphaned:
        problems.append(_orphaned(log, orphaned, orphans))
    if expected < log.size:  # more is the sequencer's work since `log` was read
        problems.append(LogBreak(log.origin, f"the log says {log.size} leaves, found {expected}"))
    if root is not None:
        if tree.size != size:
            problems.append(
                LogBreak(log.origin, f"the checkpoint signs {size} leaves, found {tree.size}")
            )
        elif tree.root() != root:
            problems.append(
                LogBreak(
                    log.origin,
                    f"the stored leaves do not hash up to the root of the signed checkpoint "
                    f"of size {size}: leaves were altered",
                )
            )
    return (tree.size if root is not None else 0), problems


KEPT_PROBLEMS = 20  # named per organization in a check; `problem_count` counts them all
KEPT_CHECKS = 1000  # the newest checks kept


def ledger_check(*, by: str, unless_running: bool = False) -> Verified | None:
    """Check the whole ledger (`ledger_verify_all`) and record what was found, each problem
    with the organization it belongs to, for the run page and `/metrics`.

    `unless_running` (the worker's schedule): None when another check is still running (one
    started within FLUIDBOX_LEDGER_CHECK_MINUTES that has not finished), so a slow check is
    never doubled by the next one due."""
    now = timezone.now()
    window = timedelta(minutes=settings.FLUIDBOX_LEDGER_CHECK_MINUTES or 60)
    # A row dated in the future is none this code wrote (it would hold the schedule back
    # for good): written past fluidbox, it is ignored.
    running = LedgerCheck.objects.filter(
        finished_at=None, started_at__gt=now - window, started_at__lte=now
    )
    if unless_running and running.exists():
        return None
    check = LedgerCheck.objects.create(started_at=now, by=by)
    done = ledger_verify_all()
    check.runs, check.events, check.leaves = done.runs, done.events, done.leaves
    check.problem_count = len(done.breaks)
    check.problems = _attributed(done.breaks)
    check.finished_at = timezone.now()
    check.save()
    done.recorded = check
    oldest_kept = (
        LedgerCheck.objects.order_by("-started_at")
        .values_list("started_at", flat=True)[KEPT_CHECKS - 1 : KEPT_CHECKS]
        .first()
    )
    if oldest_kept is not None:
        LedgerCheck.objects.filter(started_at__lt=oldest_kept).delete()
    return done


def _attributed(breaks: list) -> list[dict]:
    from governance.models import Run

    chains = [b for b in breaks if isinstance(b, ChainBreak)]
    org_of_run = dict(
        Run.objects.filter(pk__in={b.run_id for b in chains}).values_list("pk", "org_id")
    )
    org_of_run = {str(run_id): org_id for run_id, org_id in org_of_run.items()}
    org_of_log = dict(OrgLog.objects.values_list("origin", "org_id"))
    kept: list[dict] = []
    counted: dict = {}
    for item in breaks:
        org = (
            org_of_log.get(item.origin)
            if isinstance(item, LogBreak)
            else org_of_run.get(item.run_id)
        )
        counted[org] = counted.get(org, 0) + 1
        if counted[org] <= KEPT_PROBLEMS:
            problem = {"org": org, "text": break_text(item)}
            if isinstance(item, ChainBreak):
                problem["run"] = str(item.run_id)
            kept.append(problem)
    for org, count in counted.items():
        if count > KEPT_PROBLEMS:
            kept.append({"org": org, "text": f"and {count - KEPT_PROBLEMS} more"})
    return kept


def latest_ledger_check() -> LedgerCheck | None:
    """The newest finished check. One dated in the future was written past fluidbox: it
    would pass for the latest and hide every real check after it."""
    finished = LedgerCheck.objects.filter(finished_at__lte=timezone.now())
    return finished.order_by("-finished_at").first()
