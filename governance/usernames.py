"""Usernames a person can tell apart: who approved, who invoked, who owns a connection.

An approver or auditor knows people by the name the inbox, the approval page, the timeline
and the ledger show. A new or renamed account is refused when its name could pass for
another's:

- a character Django's own user form refuses (`UnicodeUsernameValidator`: letters, digits and
  `@.+-_`), so no spaces, invisible, bidirectional or control characters;
- a name that Unicode compatibility normalization (NFKC) changes (`ｂob`, `ﬁona`): it is
  written as the plain name instead;
- a letter of another script inside the name (`аdmin` with a Cyrillic `а`) or a letter drawn
  like punctuation (`governance.policy.invisible.flagged`, as the approval page marks them);
- a name equal to an existing account's once case is folded and every character is replaced
  by the one it is drawn like (Unicode TR39 confusables, from `confusable_homoglyphs`):
  `Alice` and `alice`, `асе` (all Cyrillic) and `ace`, `rn` and `m`, `l`, `I` and `1`.

`usernames_lock` serializes the check with the insert, so two look-alikes (or the same name
twice) made at the same moment cannot both pass it.
"""

import unicodedata
from functools import lru_cache

from confusable_homoglyphs.confusables import confusables_data
from django.contrib.auth.models import User
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.db import connection, transaction

from governance.policy.invisible import describe_invisible, flagged

MAX_LENGTH = 150
_DIRECTION_MARKS = str.maketrans("", "", "\u200e\u200f")
# Any 64-bit number of our own: the advisory lock every account creation and rename takes.
_LOCK_KEY = 0x0F1B_0A5E_5E12_0001


class UsernameError(ValueError):
    """Why a username is refused, in words for the person who typed it."""


def _mapping() -> dict[str, str]:
    """Character → the text it is drawn like. confusables.txt maps each look-alike to one
    prototype; the package lists both directions (the prototype lists its look-alikes, with
    right-to-left ones wrapped in direction marks), so every single character is mapped to
    one member of its group and a multi-character prototype (`m` → `rn`) is kept as text."""
    groups: dict[str, str] = {}

    def root(char: str) -> str:
        while groups.get(char, char) != char:
            char = groups[char]
        return char

    expansions: dict[str, str] = {}
    for key, entries in confusables_data.items():
        key = key.translate(_DIRECTION_MARKS)
        if len(key) != 1:
            continue
        for entry in entries:
            text = entry["c"].translate(_DIRECTION_MARKS)
            if len(text) == 1:
                a, b = sorted((root(key), root(text)))
                if a != b:
                    groups[b] = a
            elif text:
                expansions[key] = text
    members: dict[str, list[str]] = {}
    for char in {*groups, *groups.values(), *expansions}:
        members.setdefault(root(char), []).append(char)
    # Each group reads as one of its members, a plain lowercase letter where it has one (so
    # `0`, drawn like `O`, reads as `O`, and `b0b` like `bob` once case is folded).
    shown = {group: min(chars, key=_plainest) for group, chars in members.items()}
    # A group with a member drawn like several characters (`m` like `rn`) reads as those.
    spelled = {root(char): text for char, text in expansions.items()}
    return {
        char: "".join(shown.get(root(part), part) for part in spelled.get(group, shown[group]))
        for group, chars in members.items()
        for char in chars
    }


def _plainest(char: str) -> tuple[bool, bool, bool, str]:
    return (not char.isascii(), not char.isalpha(), not char.islower(), char)


@lru_cache(maxsize=1)
def _drawn_like() -> dict[int, str]:
    return {ord(char): text for char, text in _mapping().items()}


def _skeleton(text: str) -> str:
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFD", decomposed.translate(_drawn_like()))


@lru_cache(maxsize=65536)
def look_alike_keys(username: str) -> frozenset[str]:
    """Two names that share a key read alike: compared as typed, with case folded, and with
    case folded after the look-alikes are replaced (`b0b` reads `bOb`, so like `bob`)."""
    text = unicodedata.normalize("NFKC", username)
    drawn = _skeleton(text)
    return frozenset({drawn, _skeleton(text.casefold()), _skeleton(drawn.casefold())})


def username_problem(username: str) -> str | None:
    """Why this name may not be any account's, whoever else exists; None when it may."""
    if not username:
        return "a username may not be empty"
    if len(username) > MAX_LENGTH:
        return f"a username has at most {MAX_LENGTH} characters"
    positions = flagged(username, layout_is_visible=False)
    if positions:
        first = min(positions)
        return (
            "a username may not hold invisible, bidirectional or look-alike characters: "
            f"{describe_invisible(username[first], positions[first])}"
        )
    try:
        UnicodeUsernameValidator()(username)
    except ValidationError:
        return "a username holds only letters, digits and @ . + - _"
    plain = unicodedata.normalize("NFKC", username)
    if plain != username:
        return f"write this username as {plain!r}: {username!r} only looks like it"
    return None


def username_look_alike(username: str, *, exclude_pk: int | None = None) -> User | None:
    """The account whose name reads like `username` (itself excluded on a rename)."""
    keys = look_alike_keys(username)
    accounts = User.objects.exclude(pk=exclude_pk).values_list("pk", "username")
    for pk, name in accounts.iterator(chunk_size=2000):
        if name == username or keys & look_alike_keys(name):
            return User.objects.get(pk=pk)
    return None


def usernames_lock() -> None:
    """Hold, until the transaction ends, the lock under which accounts are created and
    renamed. On SQLite every write transaction already begins IMMEDIATE, one at a time."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("usernames_lock() outside a transaction would end at once")
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_LOCK_KEY])


def username_check(
    username: str, *, exclude_pk: int | None = None, may_name=lambda other: True
) -> None:
    """Refuse a name for a new (or, with `exclude_pk`, a renamed) account: a name no account
    may have, or one that reads like an existing account's. Call under `usernames_lock`.
    `may_name(other)`: whether the person typing may be told the other account's name."""
    problem = username_problem(username)
    if problem:
        raise UsernameError(problem)
    other = username_look_alike(username, exclude_pk=exclude_pk)
    if other is None:
        return
    if other.username == username:
        raise UsernameError(f"the username {username!r} is taken")
    which = f"the existing account {other.username!r}" if may_name(other) else "an existing account"
    raise UsernameError(
        f"{username!r} reads like {which}: an approver or auditor could take one for the "
        "other. Choose a name that looks different."
    )
