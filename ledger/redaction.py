"""The redactor: the only way to build a `Redacted` envelope, which is all the ledger accepts."""

import functools
import json
import math
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from fluidbox.canonical import canonical_json, sha256_hex

MASK = "[redacted]"
MAX_STRING = 200
MAX_PREVIEW = 300
MAX_DEPTH = 12
MAX_ITEMS = 50

_SECRET_WORDS = (
    r"pass(?:word|wd|phrase)?|pwd|secret|token|authori[sz]ation|api[_-]?key|apikey|cookie|"
    r"credential|private[_-]?key|session[_-]?key|sessionid|signing[_-]?key|signature|bearer|"
    r"jwt|cvv|"
    # `auth`, `basic_auth`, `X-Auth`, but not `author` nor `authority`.
    r"auth(?![a-z])"
)
SECRET_KEY_PATTERN = re.compile(_SECRET_WORDS, re.IGNORECASE)
# The same words, searched in lowercased text: ten times faster than IGNORECASE, and this
# runs on every key and string of every event.
_SECRET_WORD = re.compile(_SECRET_WORDS)
# Keys whose values are identifiers the ledger needs verbatim even though their names
# look secret-ish (e.g. `session_id` would not match; `tool_call_id` neither).
_ALLOWED_KEYS = frozenset({"session_id", "tool_call_id", "request_key", "token_count"})
# Fields whose values fluidbox writes itself (a verdict, an outcome, a digest, a name the
# call came under): a call's argument values are not masked in them, only in the text derived
# from those arguments (a reason, a match subject, a preview, an upstream's error). Known
# credentials and inline secrets are masked everywhere.
_OWN_FIELDS = frozenset(
    {
        "type",
        "tool",
        "session_id",
        "tool_call_id",
        "decision",
        "source",
        "verdict",
        "original_verdict",
        "outcome",
        "status",
        "remember_scope",
        "fail_closed",
        "arguments_digest",
        "definition_digest",
        "policy_digest",
        "result_digest",
        "trace_id",
        "span_id",
        "expires_at",
    }
)
# fluidbox's own budget figures (model tokens, counted): kept when the value is an integer,
# which no credential is.
_TOKEN_COUNTS = frozenset(
    {
        "budget_tokens",
        "requested_tokens",
        "reserved_tokens",
        "remaining_tokens",
        "input_tokens",
        "output_tokens",
    }
)

# Secrets written inline in free text (a shell command, a header line, a JSON or YAML
# snippet inside a string, escaped once more or not): `Authorization: Bearer …`,
# `PASSWORD=…`, `"api_key": "…"`, `--password …`, `https://user:…@host`, `curl -u user:…`.
# A quoted value is taken whole up to its closing quote (a passphrase holds spaces); any
# other ends at whitespace, a quote or a shell/JSON delimiter. The value is always the
# last group, and what precedes it the first.
_VALUE = (
    r"(?:\\?\"[^\"\n]+?\\?\"|'[^'\n]+'"
    r"|\\?[\"']?[^\s\"'`,;&|(){}<>\\]+)"
)
_QUOTE = r"\\?[\"']?"
_QUOTES = "\\\"'"
_INLINE_SECRETS = (
    re.compile(
        r"(\b(?:proxy-)?authori[sz]ation" + _QUOTE + r"\s*[:=]\s*"
        r"(?:" + _QUOTE + r"(?:bearer|basic|token|digest)\s+)?)" + f"({_VALUE})",
        re.IGNORECASE,
    ),
    # The key is one run of key characters, read once from its start (a lookahead finds
    # the secret word in it): `[…]*word[…]*` would backtrack quadratically on a long run.
    re.compile(
        r"((?<![A-Za-z0-9_.-])(?=[A-Za-z0-9_.-]*?(?:"
        + _SECRET_WORDS
        + r"))(?P<key>[A-Za-z0-9_.-]++)"
        + _QUOTE
        + r"\s*[:=]\s*)"
        + f"({_VALUE})",
        re.IGNORECASE,
    ),
    re.compile(
        r"((?<![A-Za-z0-9_-])--?(?:pass(?:word|wd|phrase)?|secret|token|api[_-]?key|apikey)\s+)"
        + f"({_VALUE})",
        re.IGNORECASE,
    ),
    # A bearer token on its own (`{"name": "Authorization", "value": "Bearer …"}`).
    re.compile(r"(\bbearer\s+)([A-Za-z0-9._~+/-]{8,}=*)", re.IGNORECASE),
    # The password of a URL's userinfo, and curl's `-u`/`--user user:password`.
    re.compile(
        r"((?<![a-z0-9+.-])[a-z][a-z0-9+.-]*://[^\s/:@\"'<>]*:)([^\s/@\"'<>]+)(?=@)",
        re.IGNORECASE,
    ),
    re.compile(
        r"((?<![A-Za-z0-9_-])(?:-u|--user|--proxy-user)[\s=]+[\"']?[^\s:\"']+:)" + f"({_VALUE})"
    ),
    # An XML element named as a secret: `<password>…</password>`, `<ns:ApiKey a="1">…`.
    re.compile(
        r"(<(?=[A-Za-z0-9_.:-]*?(?:"
        + _SECRET_WORDS
        + r"))(?P<key>[A-Za-z0-9_.:-]++)(?:\s[^<>]*)?>)([^<\s][^<]*)",
        re.IGNORECASE,
    ),
    # Secrets that say what they are: a PEM private key's body, a JSON Web Token.
    re.compile(r"(-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----)((?:[^-]|-(?!----END))+)"),
    re.compile(r"((?<![A-Za-z0-9_-]))(eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*)"),
    # Tokens whose form says whose they are, named by nothing (`OPENAI_KEY=sk-…`, a GitHub
    # token as a clone URL's user, `npm config set …:_authToken npm_…`): GitHub, GitLab,
    # Slack, npm, OpenAI, Anthropic, Stripe, Google API keys, AWS access key ids.
    re.compile(
        r"((?<![A-Za-z0-9_-]))("
        r"gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255}|glpat-[A-Za-z0-9_-]{20,}"
        r"|xox[abposr]-[A-Za-z0-9-]{10,}|npm_[A-Za-z0-9]{36}"
        r"|sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}|[rs]k_(?:live|test)_[A-Za-z0-9]{16,}"
        r"|AIza[0-9A-Za-z_-]{35}|(?:AKIA|ASIA)[0-9A-Z]{16}"
        r")(?![A-Za-z0-9_-])"
    ),
)
# Passwords glued to a flag by the tools that take them so, and curl's cookies: searched
# when the text names the tool. (Not as `mysql[^|;&]*?-p…`, which rescans the rest of the
# line from every `mysql`: quadratic in a line of them.)
_FLAG_SECRETS = (
    (
        re.compile(r"\b(?:mysql|mysqldump|mysqladmin|mariadb)"),
        re.compile(r"((?<![A-Za-z0-9_-])-p)([^\s\"'`,;&|(){}<>\\]+)"),
    ),
    (re.compile(r"\bsshpass\b"), re.compile(r"((?<![A-Za-z0-9_-])-p\s*)" + f"({_VALUE})")),
    (
        re.compile(r"\bcurl\b"),
        re.compile(r"((?<![A-Za-z0-9_-])(?:-b|--cookie)[\s=]+)" + f"({_VALUE})"),
    ),
)
# Inline secrets are searched only in text that holds one of these (lowercased).
_INLINE_HINT = re.compile(
    _SECRET_WORDS + r"|://|-u\b|--user|--proxy-user|mysql|mariadb|sshpass|curl|private key|eyj"
    # A token's prefix only where a token can start: `task-`, `Asia` are no hint.
    r"|(?<![a-z0-9_-])(?:gh[pousr]_|github_pat_|glpat-|xox[abposr]-|npm_|sk-|[rs]k_(?:live|test)_"
    r"|aiza|akia|asia)"
)


def _inline_patterns(text: str):
    yield from _INLINE_SECRETS
    for tool, pattern in _FLAG_SECRETS:
        if tool.search(text):
            yield pattern


_construction_token = object()


class Redacted:
    """A redacted envelope. Construct it with `redact(...)`; anything else raises."""

    __slots__ = ("_data",)

    def __init__(self, data: dict, *, _token: object = None) -> None:
        if _token is not _construction_token:
            raise TypeError("Redacted can only be built by ledger.redaction.redact()")
        self._data = data

    @property
    def data(self) -> dict:
        return self._data


class _SecretRegistry:
    """Plaintexts the vault has handled in this process, masked wherever they show up."""

    def __init__(self) -> None:
        self._values: set[str] = set()
        self._lock = threading.Lock()
        # Read several times per gate decision, written rarely: kept sorted between writes.
        self._sorted: tuple[str, ...] = ()

    def add(self, value: str) -> None:
        if value and len(value) >= 4:
            with self._lock:
                if value not in self._values:
                    self._values.add(value)
                    self._sorted = tuple(sorted(self._values, key=len, reverse=True))

    def snapshot(self) -> tuple[str, ...]:
        return self._sorted  # a tuple, replaced whole under the lock: reading it is atomic


secret_registry = _SecretRegistry()


def register_secret(value: str) -> None:
    secret_registry.add(value)


@functools.lru_cache(maxsize=1024)
def secret_spellings(secret: str) -> tuple[str, ...]:
    """The secret, and how an encoder that quoted it spells it: inside a JSON string (ASCII
    only or not) and inside a Python repr (`repr`, `ascii`). A server that echoes a
    credential through `json.dumps` or an error's `repr` doubles a backslash, puts one
    before a quote and spells a non-ASCII letter as an escape; read back, each spelling is
    the secret itself. Longest first."""
    spellings = {secret}
    for spelt in (
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
        repr(secret)[1:-1],
        ascii(secret)[1:-1],
    ):
        if spelt:
            spellings.add(spelt)
    return tuple(sorted(spellings, key=len, reverse=True))


# The escapes a JSON encoder may choose for a character besides \uXXXX: PHP's json_encode
# spells "/" as "\/" by default.
_JSON_SHORT_ESCAPES = {
    '"': '\\"', "\\": "\\\\", "/": "\\/",
    "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
}  # fmt: skip


def _unicode_escape(code: int) -> str:
    # A hex digit in either case: .NET writes \u002B, Python \u00e4.
    return re.escape("\\u") + "".join(
        f"[{digit.lower()}{digit.upper()}]" if digit.isalpha() else digit for digit in f"{code:04x}"
    )


def _json_char(char: str) -> str:
    units = char.encode("utf-16-be")
    escaped = "".join(
        _unicode_escape(int.from_bytes(units[i : i + 2], "big")) for i in range(0, len(units), 2)
    )
    choices = [escaped, re.escape(char)]
    if char in _JSON_SHORT_ESCAPES:
        choices.insert(0, re.escape(_JSON_SHORT_ESCAPES[char]))
    return "(?:" + "|".join(choices) + ")"


@functools.lru_cache(maxsize=1024)
def _json_spelling(secret: str) -> re.Pattern:
    r"""Every spelling of the secret inside a JSON string: each character as itself or as
    any escape an encoder may choose for it. Encoders differ (PHP escapes "/", .NET "+" and
    quotes as \u002B and \u0022 with upper-case hex, Gson "=" as \u003d), and any JSON
    reader turns each of them back into the secret."""
    return re.compile("".join(_json_char(char) for char in secret))


def mask_secrets(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        if not secret:
            continue
        for spelt in secret_spellings(secret):
            if spelt in text:
                text = text.replace(spelt, MASK)
        # Any other JSON spelling holds an escape, so a backslash.
        if "\\" in text:
            text = _json_spelling(secret).sub(MASK, text)
    return text


def _is_secret_key(key: str) -> bool:
    # Events carry the same few dozen keys again and again; long keys (they come from a
    # call's arguments) are checked without being kept.
    return _is_secret_short_key(key) if len(key) <= 64 else _looks_secret(key)


def _looks_secret(key: str) -> bool:
    return key not in _ALLOWED_KEYS and _SECRET_WORD.search(key.lower()) is not None


_is_secret_short_key = functools.lru_cache(maxsize=4096)(_looks_secret)


# A secret's name given as data rather than as a key: `{"name": "Authorization", "value":
# "Bearer …"}` (HTTP headers, environment variables), `{"k": "password", "v": …}`,
# `["X-Api-Key", "…"]`, an argv's `["--password", "…"]`. The value beside such a name is
# masked as a key's would be; so is curl's `["-u", "user:password"]`.
_NAME_SLOTS = ("name", "key", "k", "header", "field")
_VALUE_SLOTS = ("value", "v", "val")
_USER_FLAGS = frozenset({"-u", "--user", "--proxy-user"})
_NAME_CHARS = re.compile(r"-{0,2}[A-Za-z0-9_.-]{1,62}[:=]?")


def _names_secret(item: Any) -> bool:
    return (
        type(item) is str
        and _NAME_CHARS.fullmatch(item) is not None
        and _is_secret_key(item.strip("-:="))
    )


def _secret_slots(mapping: Mapping) -> tuple[str, ...]:
    """`value` (`v`, `val`), when this mapping is a name/value pair whose name looks secret."""
    slots = tuple(slot for slot in _VALUE_SLOTS if slot in mapping)
    if slots and any(_names_secret(mapping.get(slot)) for slot in _NAME_SLOTS):
        return slots
    return ()


def _secret_positions(items: list | tuple) -> set[int]:
    """The positions in a list that follow an item naming a secret, or curl's `-u` before a
    `user:password`."""
    return {
        index + 1
        for index, item in enumerate(items[:-1])
        if _names_secret(item)
        or (
            type(item) is str
            and item in _USER_FLAGS
            and type(items[index + 1]) is str
            and ":" in items[index + 1]
        )
    }


def _is_inline_secret(match: re.Match) -> bool:
    key = match.groupdict().get("key")
    # Not an identifier, nor a header the first pattern already masked.
    return key is None or not (
        key in _ALLOWED_KEYS or key.lower().endswith(("authorization", "authorisation"))
    )


def _mask_inline(match: re.Match) -> str:
    if not _is_inline_secret(match):
        return match.group(0)
    value = match.group(match.re.groups)
    secret = value.strip(_QUOTES)
    # A quoted value keeps its quotes: `"api_key": "[redacted]"` still reads as JSON.
    return match.group(1) + (value.replace(secret, MASK, 1) if secret else MASK)


# The same short strings come back in event after event (a verdict, `run_command:git
# status`, a tool name): those found to hold no secret word are remembered, and only those,
# so no text an inline secret was found in is kept. Emptied when full.
_NO_SECRET_WORD: dict[str, None] = {}
_NO_SECRET_WORD_SIZE = 8192
_NO_SECRET_WORD_CHARS = 256


def _has_inline_hint(text: str) -> bool:
    if text in _NO_SECRET_WORD:
        return False
    if _INLINE_HINT.search(text.lower()) is not None:
        return True
    if len(text) <= _NO_SECRET_WORD_CHARS:
        if len(_NO_SECRET_WORD) >= _NO_SECRET_WORD_SIZE:
            _NO_SECRET_WORD.clear()
        _NO_SECRET_WORD[text] = None
    return False


def mask_inline_secrets(text: str) -> str:
    """Mask secrets written inline in free text (`PASSWORD=…`, `Authorization: Bearer …`)."""
    # Most strings (ids, tool names, digests) hold no secret word: one search rules them out.
    if not _has_inline_hint(text):
        return text
    for pattern in _inline_patterns(text):
        text = pattern.sub(_mask_inline, text)
    return text


# Values shorter than this are masked only where they appear as a whole `"key":value`
# fragment: on their own, three characters would match all over unrelated text.
_MIN_BARE_SECRET = 4


def _glob_escaped(text: str) -> str:
    # The form `governance.policy.escape_pattern` writes an exact rule in (Approve & Remember).
    return "".join(f"[{c}]" if c in "*?[" else c for c in text)


# A longer argument is no match subject (the engine refuses one over 64 KiB), so the
# records carry it only truncated, masked inline on its own; not scanned twice per call.
_INLINE_SCAN_CHARS = 64 * 1024


class ArgumentSecrets:
    """What of one call's arguments sits under a secret-looking key (`api_key`, `password`,
    `Authorization`, nested too), in every form text derived from the arguments may carry
    it: the `"key":value` fragment of the canonical JSON (the match subject of a tool
    without a match argument, the call key), the bare value raw and JSON-escaped, and each
    of those glob-escaped as an exact policy rule writes them. Also every value written
    inline in one of the arguments' strings (`Authorization: Bearer T`, `--password P`):
    the same value elsewhere in the command (`… && echo T`, a segment of its own that
    holds no secret word) is the same secret."""

    __slots__ = ("_replacements",)

    def __init__(self, arguments: Any) -> None:
        replacements: dict[str, str] = {}
        pending = [arguments]
        while pending:
            value = pending.pop()
            if isinstance(value, Mapping):
                slots = _secret_slots(value)
                for key, item in value.items():
                    if isinstance(key, str) and (key in slots or _is_secret_key(key)):
                        self._collect(key, item, replacements)
                    else:
                        pending.append(key)  # a key may hold an inline secret too
                        pending.append(item)
            elif isinstance(value, list | tuple):
                positions = _secret_positions(value)
                for index, item in enumerate(value):
                    if index in positions:
                        self._collect(value[index - 1].strip("-:="), item, replacements)
                    else:
                        pending.append(item)
            elif (
                isinstance(value, str)
                and len(value) <= _INLINE_SCAN_CHARS
                and _has_inline_hint(value)
            ):
                self._collect_inline(value, replacements)
        # Longest first, so a fragment is replaced whole before a value inside it.
        self._replacements = tuple(
            sorted(replacements.items(), key=lambda pair: len(pair[0]), reverse=True)
        )

    @staticmethod
    def _collect(key: str, item: Any, into: dict[str, str]) -> None:
        try:
            fragment = f"{canonical_json(key)}:{canonical_json(item)}"
        except (TypeError, ValueError):
            return
        masked = f"{canonical_json(key)}:{canonical_json(MASK)}"
        into[fragment] = masked
        into[_glob_escaped(fragment)] = masked
        leaves = [item]
        while leaves:
            leaf = leaves.pop()
            if isinstance(leaf, Mapping):
                leaves.extend(leaf.values())
                texts = [canonical_json(leaf)]
            elif isinstance(leaf, list | tuple):
                leaves.extend(leaf)
                texts = [canonical_json(leaf)]
            elif isinstance(leaf, str):
                texts = [leaf, canonical_json(leaf)[1:-1]]
            elif isinstance(leaf, int | float) and not isinstance(leaf, bool):
                texts = [canonical_json(leaf)]
            else:
                continue
            for text in texts:
                if len(text) >= _MIN_BARE_SECRET:
                    into.setdefault(text, MASK)
                    into.setdefault(_glob_escaped(text), MASK)

    @staticmethod
    def _collect_inline(text: str, into: dict[str, str]) -> None:
        for pattern in _inline_patterns(text):
            for match in pattern.finditer(text):
                # A quoted value is the secret without its quotes (and their escapes).
                value = match.group(match.re.groups).strip(_QUOTES)
                if len(value) >= _MIN_BARE_SECRET and _is_inline_secret(match):
                    into.setdefault(value, MASK)
                    into.setdefault(canonical_json(value)[1:-1], MASK)
                    into.setdefault(_glob_escaped(value), MASK)

    def __bool__(self) -> bool:
        return bool(self._replacements)

    def mask(self, text: str) -> str:
        for needle, replacement in self._replacements:
            if needle in text:
                text = text.replace(needle, replacement)
        return text


_NO_ARGUMENT_SECRETS = ArgumentSecrets(None)


def argument_secrets(arguments: Any) -> ArgumentSecrets:
    """What to mask of these arguments. Given an `ArgumentSecrets` already taken from them,
    that (a gate decision redacts several texts from one call's arguments, and collects
    their secrets once)."""
    if isinstance(arguments, ArgumentSecrets):
        return arguments
    return ArgumentSecrets(arguments) if arguments is not None else _NO_ARGUMENT_SECRETS


def _mask_text(text: str, secrets: tuple[str, ...], from_arguments: ArgumentSecrets) -> str:
    if from_arguments:
        text = from_arguments.mask(text)
    return mask_inline_secrets(mask_secrets(text, secrets))


def _scrub_text(text: str, secrets: tuple[str, ...], args: ArgumentSecrets) -> str:
    masked = _mask_text(text, secrets, args)
    if len(masked) > MAX_STRING:
        masked = masked[:MAX_STRING] + f"… ({len(text)} chars)"
    return masked


def _scrub(value: Any, secrets: tuple[str, ...], depth: int, args: ArgumentSecrets) -> Any:
    if depth > MAX_DEPTH:
        return "[truncated]"
    # Exact types first (most values are plain str and dict): an ABC check costs more.
    if type(value) is str:
        return _scrub_text(value, secrets, args)
    if type(value) is dict or isinstance(value, Mapping):
        out = {}
        slots = _secret_slots(value)
        for index, (key, item) in enumerate(value.items()):
            if index >= MAX_ITEMS:
                out["…"] = f"{len(value) - MAX_ITEMS} more keys"
                break
            key = str(key)
            secret = key in slots or (
                _is_secret_key(key) and not (type(item) is int and key in _TOKEN_COUNTS)
            )
            # fluidbox's own words are not the call's: an agent whose "password" is `allow`
            # must not mask what was decided (nor the field's name, which two masked names
            # would collide on).
            own = key in _OWN_FIELDS
            # A key is text like any other (`{"password=…": 1}`, a known secret as a key).
            if secrets or _has_inline_hint(key):
                key = _scrub_text(key, secrets, _NO_ARGUMENT_SECRETS)
            if secret:
                out[key] = MASK
            elif own and isinstance(item, str):
                out[key] = _scrub_text(item, secrets, _NO_ARGUMENT_SECRETS)
            elif depth >= MAX_DEPTH:
                out[key] = _scrub(item, secrets, depth + 1, args)
            elif type(item) is str:
                out[key] = _scrub_text(item, secrets, args)  # what _scrub does, one call less
            elif item is None or type(item) is int:
                out[key] = item
            else:
                out[key] = _scrub(item, secrets, depth + 1, args)
        return out
    if isinstance(value, (list, tuple)):
        positions = _secret_positions(value[:MAX_ITEMS])
        items = [
            MASK if index in positions else _scrub(item, secrets, depth + 1, args)
            for index, item in enumerate(value[:MAX_ITEMS])
        ]
        if len(value) > MAX_ITEMS:
            items.append(f"… {len(value) - MAX_ITEMS} more items")
        return items
    if isinstance(value, str):
        return _scrub_text(value, secrets, args)
    if type(value) is float:
        return _stored_as_read_back(value)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return _scrub(str(value), secrets, depth, args)


def _stored_as_read_back(number: float) -> float | int | str:
    """The float as PostgreSQL's jsonb gives it back, so that the hash taken now is the one
    a verifier recomputes from the stored row: jsonb holds numbers as decimals, so `-0.0`
    comes back `0.0` and an integral `1e+16` as the integer (and NaN or infinity is no JSON
    number at all). A hash over the float as written would read as a row altered."""
    if not math.isfinite(number):
        return str(number)
    if number == 0:
        return 0.0
    if number.is_integer() and "e" in repr(number):
        return int(number)
    return number


def redact(
    data: Mapping[str, Any], *, secrets: Iterable[str] = (), arguments: Any = None
) -> Redacted:
    """Mask secret-looking keys, known secret values and inline secrets; truncate long
    strings. With `arguments`, every value those arguments hold under a secret-looking key
    is masked wherever it shows up in `data` (a match subject, a reason, a rule pattern)."""
    known = tuple(secrets) + secret_registry.snapshot()
    scrubbed = _scrub(dict(data), known, 0, argument_secrets(arguments))
    return Redacted(scrubbed, _token=_construction_token)


def redact_text(text: str, *, arguments: Any = None, inline: bool = True) -> str:
    """One piece of text stored outside the ledger but derived from a call (a decision's
    reason, a broker error): masked like a string inside `redact`, not truncated.
    `inline=False` skips the inline heuristics, for text an admin wrote (a rule's pattern)
    that only a value of this call could have made secret."""
    if inline:
        return _mask_text(text, secret_registry.snapshot(), argument_secrets(arguments))
    secrets = argument_secrets(arguments)
    text = secrets.mask(text) if secrets else text
    return mask_secrets(text, secret_registry.snapshot())


def argument_digest(arguments: Any) -> str:
    return sha256_hex(canonical_json(arguments))


def argument_preview(
    arguments: Any, *, secrets: Iterable[str] = (), found: ArgumentSecrets | None = None
) -> str:
    """A truncated, masked preview of arguments for the ledger (never the whole payload).
    `found`: `argument_secrets(arguments)` when the caller has it already."""
    known = tuple(secrets) + secret_registry.snapshot()
    found = found if found is not None else argument_secrets(arguments)
    text = canonical_json(_scrub(arguments, known, 0, found))
    if len(text) > MAX_PREVIEW:
        text = text[:MAX_PREVIEW] + "…"
    return text


def payload_digest(payload: Any) -> str:
    """Tool results and prompts enter the ledger only as this digest."""
    return sha256_hex(canonical_json(payload))
