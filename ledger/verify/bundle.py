"""Verifying a bundle written by `manage.py ledger export`, record by record.

A bundle is JSON Lines: a `bundle` header, the organization's checkpoints in order of tree
size with a `consistency` proof between each pair, then the events in leaf order (each
with its `inclusion` path when the bundle holds one run), then an `end` trailer. What is
checked, and in that order, stops at the first record that fails:

- every checkpoint is a well-formed C2SP note signed by a trusted key, for the bundle's
  origin, with growing tree sizes, each consistent with the one before;
- every checkpoint the auditor brings (`--checkpoint`, e.g. a witness's copy) is signed by
  a trusted key and agrees with the bundle's history at its size;
- every event's hash is recomputed from its content and links to the previous event of its
  run, whose seq it follows without a gap;
- organization bundles: the leaves are contiguous from 0, and the tree they build has
  exactly the signed root at every checkpoint; run bundles: each event's inclusion path
  leads to the last checkpoint's root.

Every record is read strictly first (`records.py`): no duplicate key, no field that no hash
or signature covers, every value of its type. What the verdict then claims differs by scope:
an organization bundle holds every leaf up to its last checkpoint, so nothing below that size
can be left out unnoticed; a run bundle proves its run from its first event on, but nothing
signed commits to a run's length, so it shows the run complete only up to the event it ends
with, and says whether the run's `run.finished` is among them, with the records of the calls
it lists as in flight: only those may follow it (`after_finish.py`).
"""

from collections.abc import Iterable
from dataclasses import dataclass, field

from .events import event_hash, event_leaf_hash
from .merkle import EMPTY_ROOT, CompactRange, ProofError, verify_consistency, verify_inclusion
from .note import Checkpoint, NoteError, VerifierKey, b64decode_strict
from .records import BundleError, check_fields, is_name, read_records
from .verdict import RunChain, Verdict

FORMAT = "fluidbox-ledger-bundle/1"


@dataclass
class _State:
    header: dict | None = None
    checkpoints: list[tuple[int, Checkpoint]] = field(default_factory=list)
    pending_consistency: tuple[int, dict] | None = None
    chains: dict[str, RunChain] = field(default_factory=dict)
    tree: CompactRange = field(default_factory=CompactRange)
    last_leaf: int = -1
    events: int = 0
    signers: set[str] = field(default_factory=set)
    # Roots the streamed leaves must reproduce: size -> (record, what, expected root).
    roots_due: dict[int, tuple[int, str, bytes]] = field(default_factory=dict)


def _hashes(number: int, what: str, record: dict, name: str) -> list[bytes]:
    values = record.get(name)
    if values is None and isinstance(record.get("unavailable"), str):
        reason = record["unavailable"][:200]
        raise BundleError(number, what, f"no {name} proof: the exporter had none ({reason!r})")
    if not isinstance(values, list) or not all(isinstance(value, str) for value in values):
        raise BundleError(number, what, "a proof is a list of base64 hashes")
    try:
        hashes = [b64decode_strict(value) for value in values]
    except NoteError as error:
        raise BundleError(number, what, str(error)) from None
    if any(len(value) != 32 for value in hashes):
        raise BundleError(number, what, "a proof hash is not 32 bytes")
    return hashes


def verify_bundle(
    lines: Iterable[str | bytes],
    trusted: list[VerifierKey],
    external: Iterable[str] = (),
    run: str | None = None,
) -> Verdict:
    """Check a whole bundle; raise BundleError naming the first bad record. With `run`, the
    bundle must be that run's, or an organization bundle holding events of it."""
    state = _State()
    outside = list(external)
    trailer = None
    header_number = 0
    for number, kind, record in read_records(lines):
        if trailer is not None:
            raise BundleError(number, kind, "records after the end of the bundle")
        if state.header is None and kind != "bundle":
            raise BundleError(number, kind, "a bundle starts with its `bundle` header")
        if kind == "bundle":
            _header(state, number, record, run)
            header_number = number
            continue
        check_fields(number, kind, record)
        if kind == "key":
            continue  # informational: trust comes only from the keys the auditor passes
        elif kind == "checkpoint":
            _checkpoint(state, number, record, trusted)
        elif kind == "consistency":
            _consistency(state, number, record)
        elif kind == "event":
            if state.events == 0:
                _before_events(state, number, trusted, outside)
            _event(state, number, record)
        else:
            trailer = (number, record)
    if state.header is None:
        raise BundleError(0, "bundle", "empty bundle")
    if trailer is None:
        raise BundleError(0, "end", "the bundle is cut short: no `end` record")
    if state.events == 0:
        _before_events(state, trailer[0], trusted, outside)
    _finish(state, *trailer)
    final = state.checkpoints[-1][1]
    scope = state.header["scope"]
    if scope == "org" and run is not None and run not in state.chains:
        raise BundleError(
            header_number, "bundle", f"no event of run {run!r} under tree size {final.size}"
        )
    return Verdict(
        origin=final.origin,
        scope=scope,
        run=state.header["run"] if scope == "run" else run,
        events=state.events,
        chains=state.chains,
        checkpoints=len(state.checkpoints),
        tree_size=final.size,
        root=final.root,
        keys=sorted(state.signers),
        external=len(outside),
    )


def _header(state: _State, number: int, record: dict, expected_run: str | None) -> None:
    if state.header is not None:
        raise BundleError(number, "bundle", "a second header")
    if record.get("format") != FORMAT:
        raise BundleError(number, "bundle", f"unknown format {str(record.get('format'))[:60]!r}")
    check_fields(number, "bundle", record)
    scope, run = record["scope"], record.get("run")
    if scope not in ("org", "run"):
        raise BundleError(number, "bundle", f"unknown scope {scope[:60]!r}: org or run")
    if scope == "run" and not is_name(run):
        raise BundleError(number, "bundle", "a run bundle's header names its run")
    if scope == "org" and run is not None:
        raise BundleError(number, "bundle", "an organization bundle's header names no run")
    if scope == "run" and expected_run is not None and run != expected_run:
        raise BundleError(number, "bundle", f"a bundle of run {run}, not of run {expected_run!r}")
    state.header = record


def _checkpoint(state: _State, number: int, record: dict, trusted: list[VerifierKey]) -> None:
    if state.events:
        raise BundleError(number, "checkpoint", "checkpoints come before the events")
    try:
        checkpoint = Checkpoint.parse(record["note"])
        signers = checkpoint.note.verified_by(trusted)
    except NoteError as error:
        raise BundleError(number, "checkpoint", str(error)) from None
    what = f"checkpoint of tree size {checkpoint.size}"
    if checkpoint.origin != state.header["origin"]:
        raise BundleError(number, what, f"signed for another log: {checkpoint.origin!r}")
    state.signers.update(key.label for key in signers)
    if state.checkpoints:
        previous_number, previous = state.checkpoints[-1]
        if checkpoint.size <= previous.size:
            raise BundleError(number, what, f"does not grow the tree of record {previous_number}")
        if state.pending_consistency is None:
            raise BundleError(
                number, what, f"no consistency proof from size {previous.size} precedes it"
            )
        proof_number, proof = state.pending_consistency
        if (proof["from"], proof["to"]) != (previous.size, checkpoint.size):
            raise BundleError(
                proof_number,
                "consistency",
                f"proves {proof['from']}->{proof['to']}, not {previous.size}->{checkpoint.size}",
            )
        if proof["path"] is None and state.header["scope"] == "org":
            # The exporter could not build it from the stored tree. An organization bundle
            # proves consistency anyway: every checkpoint's root must come out of a prefix
            # of the same leaves, checked as they stream past.
            path = None
        else:
            path = _hashes(proof_number, "consistency", proof, "path")
        try:
            if path is not None:
                verify_consistency(
                    previous.size, checkpoint.size, path, previous.root, checkpoint.root
                )
        except ProofError as error:
            raise BundleError(
                number,
                what,
                f"inconsistent with the checkpoint of size {previous.size} "
                f"(record {previous_number}): {error}: history was rewritten",
            ) from None
        state.pending_consistency = None
    state.checkpoints.append((number, checkpoint))
    state.roots_due[checkpoint.size] = (number, what, checkpoint.root)


def _consistency(state: _State, number: int, record: dict) -> None:
    if not state.checkpoints or state.pending_consistency is not None:
        raise BundleError(number, "consistency", "a consistency proof out of place")
    if "unavailable" in record and record["path"] is not None:
        raise BundleError(number, "consistency", "'unavailable' comes only with no path")
    state.pending_consistency = (number, record)


def _before_events(state: _State, number: int, trusted, outside: list[str]) -> None:
    """Once the checkpoints are read: the header's tree size, and the outside checkpoints."""
    if not state.checkpoints:
        raise BundleError(number, "bundle", "the bundle holds no checkpoint")
    final_number, final = state.checkpoints[-1]
    if state.pending_consistency is not None:
        raise BundleError(state.pending_consistency[0], "consistency", "proves nothing")
    if final.size != state.header["tree_size"]:
        raise BundleError(
            final_number, "checkpoint", f"the header says tree size {state.header['tree_size']}"
        )
    by_size = {cp.size: (n, cp) for n, cp in state.checkpoints}
    for index, text in enumerate(outside, start=1):
        what = f"independently held checkpoint #{index}"
        try:
            held = Checkpoint.parse(text)
            held.note.verified_by(trusted)
        except NoteError as error:
            raise BundleError(0, what, str(error)) from None
        what = f"{what} (tree size {held.size})"
        if held.origin != final.origin:
            raise BundleError(0, what, f"is for another log: {held.origin!r}")
        if held.size > final.size:
            raise BundleError(
                final_number,
                f"checkpoint of tree size {final.size}",
                f"the log was cut back: a checkpoint of size {held.size} was published, "
                f"this bundle ends at {final.size}",
            )
        if held.size in by_size:
            found_number, found = by_size[held.size]
            if found.root != held.root:
                raise BundleError(
                    found_number,
                    f"checkpoint of tree size {held.size}",
                    f"forked history: differs from the {what} at the same size",
                )
        elif held.size == 0:
            # No leaf is read before the root of size 0 could be checked: check it now.
            if held.root != EMPTY_ROOT:
                raise BundleError(0, what, "a tree of size 0 must have the empty root")
        elif state.header["scope"] == "org":
            # The leaves below will be held to the published root at that size; two held
            # checkpoints of one size must agree (only one root can be checked there).
            earlier = state.roots_due.get(held.size)
            if earlier is not None and earlier[2] != held.root:
                raise BundleError(
                    0, what, f"forked history: differs from the {earlier[1]} at the same size"
                )
            state.roots_due[held.size] = (0, what, held.root)
        else:
            raise BundleError(0, what, "no checkpoint of that size in this run bundle")


def _event(state: _State, number: int, record: dict) -> None:
    leaf, run, seq = record["leaf"], record["run"], record["seq"]
    prev_hash, digest = record["prev_hash"], record["hash"]
    if state.header["scope"] == "run":
        if "inclusion" not in record:
            raise BundleError(number, "event", "no 'inclusion' field in a run bundle")
        if "unavailable" in record and record["inclusion"] is not None:
            raise BundleError(number, "event", "'unavailable' comes only with no inclusion")
    elif record.keys() & {"inclusion", "unavailable"}:
        field_name = min(record.keys() & {"inclusion", "unavailable"})
        raise BundleError(
            number, "event", f"unknown field {field_name!r} in an organization bundle"
        )
    try:
        recomputed = event_hash(
            prev_hash=prev_hash,
            run=run,
            seq=seq,
            type=record["type"],
            at=record["at"],
            data=record["data"],
        )
    except (TypeError, ValueError, RecursionError) as error:
        raise BundleError(number, "event", f"malformed event: {error}") from None
    hashed_leaf = event_leaf_hash(digest)
    what = f"event run {run} seq {seq}, leaf {leaf}"
    final_size = state.checkpoints[-1][1].size
    if state.header["scope"] == "org":
        if leaf != state.last_leaf + 1:
            raise BundleError(
                number, what, f"leaves jump from {state.last_leaf} to {leaf}: a leaf is missing"
            )
    elif leaf <= state.last_leaf:
        raise BundleError(number, what, f"leaves out of order after {state.last_leaf}")
    if leaf >= final_size:
        raise BundleError(number, what, f"beyond the last checkpoint's tree size {final_size}")
    if state.header["scope"] == "run" and run != state.header.get("run"):
        raise BundleError(number, what, "an event of another run in a run bundle")
    chain = state.chains.setdefault(run, RunChain())
    if seq != chain.seq + 1:
        raise BundleError(number, what, f"seq {chain.seq + 1} of this run is missing")
    if prev_hash != chain.hash:
        raise BundleError(number, what, "prev_hash does not link to the run's previous event")
    if recomputed != digest:
        raise BundleError(number, what, "the event's content does not hash to its hash: altered")
    problem = chain.after_finish.event(seq, record["type"], record["data"])
    if problem:
        raise BundleError(number, what, problem)
    chain.seq, chain.hash = seq, digest
    state.last_leaf = leaf
    state.events += 1
    if state.header["scope"] == "run":
        path = _hashes(number, what, record, "inclusion")
        final = state.checkpoints[-1][1]
        try:
            verify_inclusion(hashed_leaf, leaf, final.size, path, final.root)
        except ProofError as error:
            raise BundleError(
                number, what, f"not in the tree of size {final.size}: {error}"
            ) from None
        return
    state.tree.append(hashed_leaf)
    due = state.roots_due.get(state.tree.size)
    if due is not None and state.tree.root() != due[2]:
        due_number, due_what, _ = due
        raise BundleError(
            due_number or number,
            due_what,
            f"the bundle's leaves 0-{state.tree.size - 1} (up to record {number}) do not build "
            "the signed root: events were changed, removed, added or reordered",
        )


def _finish(state: _State, number: int, record: dict) -> None:
    if record["events"] != state.events:
        raise BundleError(
            number, "end", f"says {record['events']} events, the bundle holds {state.events}"
        )
    final_number, final = state.checkpoints[-1]
    if state.header["scope"] == "org" and state.tree.size != final.size:
        raise BundleError(
            final_number,
            f"checkpoint of tree size {final.size}",
            f"the bundle holds only {state.tree.size} of its leaves",
        )
