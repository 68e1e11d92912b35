"""What a verified bundle proves, in the one line the verifier prints."""

import base64
from dataclasses import dataclass

from .events import GENESIS_HASH

RUN_FINISHED = "run.finished"


@dataclass
class RunChain:
    seq: int = 0
    hash: str = GENESIS_HASH
    finished: int | None = None  # the seq of the run's `run.finished` event


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
        """False for a run bundle that does not show its run finished: nothing signed says
        whether events after the last one shown were left out."""
        if self.scope == "org":
            return True
        chain = self.chains.get(self.run)
        return chain is not None and chain.finished is not None

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
        if chain.finished is not None:
            return f"OK: {shown}; the run finished (run.finished is seq {chain.finished})"
        return (
            f"INCOMPLETE: {shown}; but no run.finished event is shown: the run had not finished "
            f"by tree size {size}, or its later events were left out of this bundle "
            "(the organization's bundle shows every event)"
        )


def _progress(chain: RunChain, size: int) -> str:
    if chain.finished is not None:
        return f"seq 1-{chain.seq}, finished (run.finished is seq {chain.finished})"
    return f"seq 1-{chain.seq}, not finished by tree size {size}"
