"""The three verdicts a rule can give, ordered by how much they restrict."""

from enum import StrEnum

_RANK = {"ALWAYS": 0, "ASK": 1, "NEVER": 2}
_DECISION = {"ALWAYS": "allow", "ASK": "require_approval", "NEVER": "deny"}


class Verdict(StrEnum):
    """ALWAYS allows, ASK requires approval, NEVER denies; NEVER > ASK > ALWAYS."""

    ALWAYS = "ALWAYS"
    ASK = "ASK"
    NEVER = "NEVER"

    @property
    def rank(self) -> int:
        return _RANK[self.value]

    @property
    def decision(self) -> str:
        return _DECISION[self.value]

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Verdict):
            return NotImplemented
        return self.rank < other.rank

    def __le__(self, other: object) -> bool:
        if not isinstance(other, Verdict):
            return NotImplemented
        return self.rank <= other.rank

    def __gt__(self, other: object) -> bool:
        if not isinstance(other, Verdict):
            return NotImplemented
        return self.rank > other.rank

    def __ge__(self, other: object) -> bool:
        if not isinstance(other, Verdict):
            return NotImplemented
        return self.rank >= other.rank
