"""What may follow a run's `run.finished` event in its chain.

Once a run has finished nothing can be asked of the gate, reserved or settled for it, and
no call of it can be claimed by the broker: its token is void and every service refuses a
finished run. What can still come is the broker's record (`tool.brokered`) of each call
that was running at the finish, one each. `run.finished` lists those calls (`in_flight`,
named as their records name them), so a checker can flag anything else after it, and a run's
bundle that shows every listed record is the whole run: nothing can come after it.

Both the online check (`ledger.chain_checks`) and the offline verifier use this; it needs
neither Django nor a database.
"""

from collections import Counter

RUN_FINISHED = "run.finished"
TOOL_BROKERED = "tool.brokered"


def _named(data) -> tuple[str, str] | None:
    if not isinstance(data, dict):
        return None
    session, call = data.get("session_id"), data.get("tool_call_id")
    if not isinstance(session, str) or not isinstance(call, str):
        return None
    return session, call


class AfterFinish:
    """Fed one run's events in seq order; `event` returns the problem with an event, if any."""

    def __init__(self) -> None:
        self.finished: int | None = None  # the seq of `run.finished`
        # The calls still to be recorded, by (session_id, tool_call_id), each as many times
        # as the finish listed it: names are masked, so two calls whose ids look like
        # secrets are both `[redacted]` and each has its record. None when the finish did
        # not list them (a run finished before fluidbox recorded them).
        self.awaited: Counter[tuple[str, str]] | None = None
        self.listed: int | None = None  # how many calls the finish listed in flight

    def event(self, seq: int, type: str, data) -> str | None:
        if self.finished is None:
            if type == RUN_FINISHED:
                self.finished = seq
                self.awaited = _in_flight(data)
                self.listed = None if self.awaited is None else self.awaited.total()
            return None
        if type != TOOL_BROKERED:
            return (
                f"a {type} event after run.finished (seq {self.finished}): only the broker's "
                "records of the calls in flight at the finish may follow it"
            )
        if self.awaited is None:
            return None
        named = _named(data)
        if not self.awaited[named]:
            return (
                f"a tool.brokered event after run.finished (seq {self.finished}) for a call "
                "it did not list as in flight, or recorded twice"
            )
        self.awaited[named] -= 1
        return None

    def outstanding(self) -> list[str]:
        """The `tool_call_id`s of the calls in flight at the finish not yet recorded."""
        return sorted(call for _, call in (self.awaited or Counter()).elements())


def _in_flight(data) -> Counter[tuple[str, str]] | None:
    listed = data.get("in_flight") if isinstance(data, dict) else None
    if not isinstance(listed, list):
        return None
    awaited: Counter[tuple[str, str]] = Counter()
    for entry in listed:
        named = _named(entry)
        if named is None:
            # Not a call (the ledger keeps at most 50 items of a list): the list is not
            # whole, so it cannot say what may follow.
            return None
        awaited[named] += 1
    return awaited
