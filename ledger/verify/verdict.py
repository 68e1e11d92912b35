"""What a verified bundle proves, in the one line the verifier prints."""

import base64
from dataclasses import dataclass, field

from .after_finish import AfterFinish
from .events import GENESIS_HASH


@dataclass
class RunChain:
    seq: int = 0
    hash: str = GENESIS_HASH
    after_finish: AfterFinish = field(default_factory=AfterFinish)

    @property
    def finished(self) -> int | None:
        """The seq of the run's `run.finished` event."""
        return self.after_finish.finished


@dataclass
class Verdict:
    origin: str
    scope: str
    run: str | None  # the run bundle's run, or the run the auditor asked about (`--run`)
    events: int
    chains: dict[str, RunChain]
    checkpoints: int
    tree_size: int
    root: bytes
    keys: list[str]
    external: int

    @property
    def complete(self) -> bool:
        """False for a run bundle that does not show its run finished, or not the records of
        the calls its finish left in flight: nothing signed says whether events after the
        last one shown were left out."""
        if self.scope == "org":
            return True
        chain = self.chains.get(self.run)
        return chain is not None and chain.finished is not None and not _awaited(chain)

    def summary(self) -> str:
        root = base64.b64encode(self.root).decode("ascii")
        signed = (
            f"{self.checkpoints} checkpoint(s) signed by {', '.join(self.keys)}, "
            "each consistent with the one before"
        )
        if self.external:
            signed += f"; agrees with {self.external} independently held checkpoint(s)"
        size = self.tree_size
        if self.scope == "org":
            finished = sum(1 for chain in self.chains.values() if chain.finished is not None)
            line = (
                f"OK: the whole log {self.origin} up to tree size {size}: {self.events} events "
                f"in {len(self.chains)} run(s) ({finished} finished) are exactly leaves "
                f"0-{size - 1} (root {root}), none left out; {signed}; "
                "every run's chain and seq hold"
            )
            if self.run is not None:
                line += f"; run {self.run}: {_progress(self.chains[self.run], size)}"
            return line
        chain = self.chains.get(self.run)
        if chain is None:
            return (
                f"INCOMPLETE: run {self.run}: none of its events is in the tree of size {size} "
                f"of the log {self.origin} (root {root}); {signed}"
            )
        shown = (
            f"run {self.run}: its events seq 1-{chain.seq} are included in the tree of size "
            f"{size} of the log {self.origin} (root {root}); {signed}; "
            "the run's chain and seq hold"
        )
        awaited = _awaited(chain)
        if chain.finished is not None and awaited:
            return (
                f"INCOMPLETE: {shown}; the run finished (run.finished is seq {chain.finished}) "
                f"with {len(awaited)} call(s) in flight whose broker records are not shown "
                f"(tool_call_id {', '.join(awaited)}): they came after tree size {size}, or "
                "were left out of this bundle (the organization's bundle shows every event)"
            )
        if chain.finished is not None:
            return f"OK: {shown}; {_finish(chain)}"
        return (
            f"INCOMPLETE: {shown}; but no run.finished event is shown: the run had not finished "
            f"by tree size {size}, or its later events were left out of this bundle "
            "(the organization's bundle shows every event)"
        )


def _awaited(chain: RunChain) -> list[str]:
    return chain.after_finish.outstanding()


def _finish(chain: RunChain) -> str:
    said = f"the run finished (run.finished is seq {chain.finished})"
    listed = chain.after_finish.listed
    if listed is None:  # a run finished before `run.finished` listed its calls in flight
        return said
    if not listed:
        return said + " with no call in flight: no event can follow it, these are all the run's"
    return (
        f"{said} with {listed} call(s) in flight, whose broker records are shown: no other "
        "event can follow, these are all the run's"
    )


def _progress(chain: RunChain, size: int) -> str:
    awaited = _awaited(chain)
    if chain.finished is not None and awaited:
        return (
            f"seq 1-{chain.seq}, finished (run.finished is seq {chain.finished}) with "
            f"{len(awaited)} call(s) in flight not yet recorded by tree size {size}"
        )
    if chain.finished is not None:
        return f"seq 1-{chain.seq}, {_finish(chain).removeprefix('the run ')}"
    return f"seq 1-{chain.seq}, not finished by tree size {size}"
