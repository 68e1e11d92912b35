"""Frozen tool schemas: the freeze-time guard and network-free, crash-safe validators."""

import functools
import math
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import regex
from jsonschema import Draft202012Validator, ValidationError, validators
from jsonschema.exceptions import SchemaError
from referencing import Registry
from referencing.exceptions import NoSuchResource

from fluidbox.canonical import canonical_json

MAX_SCHEMA_BYTES = 64 * 1024
MAX_SCHEMA_DEPTH = 32
MAX_ARGUMENT_BYTES = 256 * 1024
PATTERN_TIMEOUT_SECONDS = 0.05
# Every pattern search of one call's validation together: a schema pattern applied to each
# of thousands of strings or keys, each just under PATTERN_TIMEOUT_SECONDS, adds up.
PATTERNS_TIMEOUT_SECONDS = 0.5
# The whole validation of one call: a schema whose $refs fan out (each of 30 definitions an
# `anyOf` of two $refs to the next) is a few KiB, passes the freeze guard, and takes 2**30
# steps on an argument that fails it. Generous: 256 KiB of ordinary arguments takes < 1 s.
VALIDATION_TIMEOUT_SECONDS = 5.0
_REF_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")


UNSTORABLE_ARGUMENTS = (
    "arguments may not contain NUL characters (\\u0000), unpaired UTF-16 surrogates, "
    "numbers too large for a double (1e999), a negative zero (-0.0) or a fraction of 1e16 "
    "or more (1e300: write it as an integer or a string)"
)


def arguments_refusal(arguments: Any) -> str | None:
    """Why a call's arguments cannot be taken as they came, in the words every way in answers
    with (REST's 400, the MCP endpoint's tool error); None when they can. Nothing is recorded
    for refused arguments."""
    if not isinstance(arguments, dict):
        return "arguments must be a JSON object"
    if not arguments_storable(arguments):
        return UNSTORABLE_ARGUMENTS
    if len(canonical_json(arguments).encode("utf-8")) > MAX_ARGUMENT_BYTES:
        return f"arguments exceed {MAX_ARGUMENT_BYTES} bytes"
    return None


def arguments_storable(arguments: Any) -> bool:
    """Whether the ledger can store these arguments as they came: PostgreSQL's jsonb holds
    no NUL, and an unpaired surrogate (which `json.loads` reads from a `\\ud800` escape)
    has no UTF-8 form, so no digest or text column can take it; a number past a double's
    range (`1e999`, which `json.loads` reads as infinity) is not JSON once written back; and
    jsonb gives back `-0.0` as `0.0` and `1e+300` as an integer of 301 digits, so the approver
    would be shown, and the call's later checks would read, other values than the call's key
    and the upstream hold. Every way in (REST's `ArgumentsField`, the MCP endpoint) refuses
    such arguments before the gate records anything."""
    for item in json_scalars(arguments):
        if isinstance(item, str):
            if "\x00" in item:
                return False
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    return False
        elif isinstance(item, float) and not _stored_as_it_came(item):
            return False
    return True


def _stored_as_it_came(number: float) -> bool:
    """Whether jsonb gives this float back as the same JSON number: not infinity, not a
    negative zero, and not written with a positive exponent (Python writes one from 1e16 on,
    where jsonb, holding it as a decimal, gives back an integer)."""
    if not math.isfinite(number) or "e+" in repr(number):
        return False
    return not (number == 0 and math.copysign(1.0, number) < 0)


def json_scalars(value: Any) -> Iterator[Any]:
    """Every string, number, boolean and null in parsed JSON, object keys included, without
    recursion (a body may nest as deep as the parser allowed)."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            pending.extend(item)
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
        else:
            yield item


class PatternTimeout(Exception):
    """A schema `pattern` took too long: treated as a validator crash, i.e. a deny."""


class ValidationTimeout(Exception):
    """The whole validation took too long: treated as a validator crash, i.e. a deny."""


def _refuse_retrieval(uri: str):
    # Validation must never open a socket or a file: every non-local reference is refused.
    raise NoSuchResource(ref=uri)


NO_NETWORK_REGISTRY: Registry = Registry(retrieve=_refuse_retrieval)


def _depth(value: Any, level: int = 0) -> int:
    if level > MAX_SCHEMA_DEPTH:
        return level
    if isinstance(value, dict):
        return max([_depth(item, level + 1) for item in value.values()], default=level)
    if isinstance(value, list):
        return max([_depth(item, level + 1) for item in value], default=level)
    return level


def _refs(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key in _REF_KEYWORDS and isinstance(item, str):
                yield item
            else:
                yield from _refs(item)
    elif isinstance(value, list):
        for item in value:
            yield from _refs(item)


def guard_schema(schema: Any) -> str | None:
    """Why a schema may not be frozen as callable, or None when it passes the guard."""
    if not isinstance(schema, dict):
        return "schema must be a JSON object"
    try:
        size = len(canonical_json(schema).encode("utf-8"))
    except (TypeError, ValueError):
        return "schema is not JSON"
    if size > MAX_SCHEMA_BYTES:
        return f"schema is {size} bytes, over the {MAX_SCHEMA_BYTES}-byte bound"
    if _depth(schema) > MAX_SCHEMA_DEPTH:
        return f"schema nests deeper than {MAX_SCHEMA_DEPTH} levels"
    for ref in _refs(schema):
        if not ref.startswith("#"):
            return f"schema has a non-local $ref {ref[:100]!r}"
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as error:
        return f"schema is not a valid JSON Schema: {error.message[:200]}"
    return None


# ECMA-262, the dialect of a schema's `pattern` (JSON Schema 2020-12, 6.4), read by Python's
# engine: `$` there is the end of the input only, never before a trailing newline ("main\n"
# would pass `^[a-z]+$`); `.` never matches a line terminator; `\d`, `\w` and `\b` are ASCII
# (a Cyrillic `а` is no `\w`); `\s` is ECMA's whitespace list.
_ECMA_WORD = "A-Za-z0-9_"
_ECMA_SPACE = (
    "\\t\\n\\x0b\\f\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
)
_ECMA_OUTSIDE = {
    "d": "[0-9]",
    "D": "[^0-9]",
    "w": f"[{_ECMA_WORD}]",
    "W": f"[^{_ECMA_WORD}]",
    "s": f"[{_ECMA_SPACE}]",
    "S": f"[^{_ECMA_SPACE}]",
    "b": f"(?:(?<=[{_ECMA_WORD}])(?![{_ECMA_WORD}])|(?<![{_ECMA_WORD}])(?=[{_ECMA_WORD}]))",
    "B": f"(?:(?<=[{_ECMA_WORD}])(?=[{_ECMA_WORD}])|(?<![{_ECMA_WORD}])(?![{_ECMA_WORD}]))",
}
# In a bracket; `\D`, `\W`, `\S` stay Python's there, which only ever exclude more.
_ECMA_INSIDE = {"d": "0-9", "w": _ECMA_WORD, "s": _ECMA_SPACE}


def ecma_pattern(pattern: str) -> str:
    """An ECMA-262 pattern rewritten so the `regex` module matches what it means."""
    out: list[str] = []
    i, size = 0, len(pattern)
    while i < size:
        char = pattern[i]
        if char == "\\" and i + 1 < size:
            escaped = pattern[i + 1]
            out.append(_ECMA_OUTSIDE.get(escaped, "\\" + escaped))
            i += 2
        elif char == "[":
            i = _ecma_class(pattern, i, out)
        elif char == "$":
            out.append("\\Z")
            i += 1
        elif char == ".":
            out.append("[^\\n\\r\\u2028\\u2029]")
            i += 1
        else:
            out.append(char)
            i += 1
    return "".join(out)


def _ecma_class(pattern: str, i: int, out: list[str]) -> int:
    """The bracket at `i` onto `out`; the index after it."""
    size = len(pattern)
    i += 1
    negated = i < size and pattern[i] == "^"
    if negated:
        i += 1
    if i < size and pattern[i] == "]":  # ECMA's `[]` matches nothing, `[^]` anything
        out.append("(?s:.)" if negated else "(?!)")
        return i + 1
    out.append("[^" if negated else "[")
    while i < size and pattern[i] != "]":
        char = pattern[i]
        if char == "\\" and i + 1 < size:
            escaped = pattern[i + 1]
            out.append(_ECMA_INSIDE.get(escaped, "\\" + escaped))
            i += 2
            continue
        out.append("\\[" if char == "[" else char)  # no nested sets or [:alpha:] in ECMA
        i += 1
    out.append("]")
    return i + 1


@functools.lru_cache(maxsize=4096)
def _compiled(pattern: str):
    return regex.compile(ecma_pattern(pattern), regex.VERSION0)


@dataclass(frozen=True)
class _Deadlines:
    """When one call's validation must stop (monotonic clock): its pattern searches taken
    together, and the whole of it."""

    patterns: float
    whole: float

    @classmethod
    def from_now(cls) -> "_Deadlines":
        now = time.monotonic()
        return cls(now + PATTERNS_TIMEOUT_SECONDS, now + VALIDATION_TIMEOUT_SECONDS)


_UNBOUNDED = _Deadlines(math.inf, math.inf)
# The deadlines of the validation running in this thread (jsonschema calls the keywords
# with no room for them).
_running = threading.local()


def _deadlines() -> _Deadlines:
    return getattr(_running, "deadlines", _UNBOUNDED)


def _safe_search(pattern: str, text: str) -> bool:
    left = _deadlines().patterns - time.monotonic()
    if left <= 0:
        raise PatternTimeout(pattern[:100])
    try:
        return (
            _compiled(pattern).search(text, timeout=min(PATTERN_TIMEOUT_SECONDS, left)) is not None
        )
    except TimeoutError:
        raise PatternTimeout(pattern[:100]) from None


def _pattern(validator, pattern, instance, schema):
    if validator.is_type(instance, "string") and not _safe_search(pattern, instance):
        yield ValidationError(f"does not match {pattern[:100]!r}")


def _pattern_properties(validator, pattern_properties, instance, schema):
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in pattern_properties.items():
        for key, value in instance.items():
            if _safe_search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator, additional, instance, schema):
    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = [
        key
        for key in instance
        if key not in properties and not any(_safe_search(p, key) for p in patterns)
    ]
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        yield ValidationError(
            "additional properties are not allowed", path=(), validator_value=sorted(extras)
        )


def _evaluated_keys(validator, instance: dict, schema) -> set:
    """jsonschema's `find_evaluated_property_keys_by_schema`, with `_safe_search` for its
    patternProperties: it calls `re.search` itself, with no timeout, and `re` backtracks
    for hours on patterns `regex` answers at once (`^(a+)+$`), so a key chosen by the caller
    would hold a worker (and the GIL) far past PATTERN_TIMEOUT_SECONDS."""
    if validator.is_type(schema, "boolean"):
        return set()
    keys: set = set()
    for keyword in ("$ref", "$dynamicRef"):
        ref = schema.get(keyword)
        if ref is not None:
            resolved = validator._resolver.lookup(ref)
            inner = validator.evolve(schema=resolved.contents, _resolver=resolved.resolver)
            keys |= _evaluated_keys(inner, instance, resolved.contents)
    properties = schema.get("properties")
    if validator.is_type(properties, "object"):
        keys |= properties.keys() & instance.keys()
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        subschema = schema.get(keyword)
        if subschema is not None:
            keys |= {
                key
                for key, value in instance.items()
                if next(validator.descend(value, subschema), None) is None
            }
    for pattern in schema.get("patternProperties", {}):
        keys |= {key for key in instance if _safe_search(pattern, key)}
    for name, subschema in schema.get("dependentSchemas", {}).items():
        if name in instance:
            keys |= _evaluated_keys(validator, instance, subschema)
    for keyword in ("allOf", "oneOf", "anyOf"):
        for subschema in schema.get(keyword, []):
            if next(validator.descend(instance, subschema), None) is None:
                keys |= _evaluated_keys(validator, instance, subschema)
    if "if" in schema:
        if validator.evolve(schema=schema["if"]).is_valid(instance):
            keys |= _evaluated_keys(validator, instance, schema["if"])
            if "then" in schema:
                keys |= _evaluated_keys(validator, instance, schema["then"])
        elif "else" in schema:
            keys |= _evaluated_keys(validator, instance, schema["else"])
    return keys


def _unevaluated_properties(validator, unevaluated, instance, schema):
    if not validator.is_type(instance, "object"):
        return
    evaluated = _evaluated_keys(validator, instance, schema)
    rejected = [
        key
        for key in instance
        if key not in evaluated
        and next(validator.descend(instance[key], unevaluated, path=key), None) is not None
    ]
    if rejected:
        yield ValidationError("unevaluated properties are not allowed or not valid")


def _unique_items(validator, unique, instance, schema):
    """jsonschema compares items pairwise when they do not sort (objects, mixed types): a
    256 KiB array of them took minutes. Here each item's canonical form goes in a set."""
    if not unique or not validator.is_type(instance, "array"):
        return
    seen: set[str] = set()
    for item in instance:
        key = canonical_json(_equal_form(item))
        if key in seen:
            yield ValidationError("has non-unique elements")
            return
        seen.add(key)


def _equal_form(value: Any) -> Any:
    """`value` with whole floats as ints: JSON Schema's equality (1 == 1.0, true != 1, keys
    in any order) becomes equality of canonical JSON."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_equal_form(item) for item in value]
    if isinstance(value, dict):
        return {key: _equal_form(item) for key, item in value.items()}
    return value


def _timed(keyword):
    """A keyword's check that first asks whether the call's validation is past its time:
    every step of a validation (each $ref followed, each anyOf branch, each item) runs one."""

    def check(validator, value, instance, schema):
        if time.monotonic() > _deadlines().whole:
            raise ValidationTimeout()
        return keyword(validator, value, instance, schema) or ()

    return check


_KEYWORDS = {
    **Draft202012Validator.VALIDATORS,
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
    "unevaluatedProperties": _unevaluated_properties,
    "uniqueItems": _unique_items,
}
SafeValidator = validators.extend(
    Draft202012Validator, {name: _timed(keyword) for name, keyword in _KEYWORDS.items()}
)

_cache_lock = threading.Lock()


@functools.lru_cache(maxsize=4096)
def _validator_for(schema_json: str):
    import json

    return SafeValidator(json.loads(schema_json), registry=NO_NETWORK_REGISTRY)


def validator_for(schema: dict):
    """A prepared validator, compiled once per distinct schema."""
    return _validator_for(canonical_json(schema))


@dataclass(frozen=True)
class ArgumentProblem:
    text: str
    # The validator itself failed (a crash, a pattern over its time): a fail-closed deny.
    validator_failed: bool = False


def argument_problem(schema: dict, arguments: Any) -> ArgumentProblem | None:
    """Why the arguments fail the schema (model-readable), or None when they pass.

    Any crash of the validator (a pathological pattern, a refused reference, a recursion
    limit) is reported as a failure: it denies, never allows.
    """
    try:
        size = len(canonical_json(arguments).encode("utf-8"))
    except (TypeError, ValueError):
        return ArgumentProblem("arguments are not JSON")
    if size > MAX_ARGUMENT_BYTES:
        return ArgumentProblem(
            f"arguments are {size} bytes, over the {MAX_ARGUMENT_BYTES}-byte bound"
        )
    _running.deadlines = _Deadlines.from_now()
    try:
        error = next(iter(validator_for(schema).iter_errors(arguments)), None)
    except PatternTimeout as timeout:
        return ArgumentProblem(
            f"schema pattern {timeout.args[0]!r} took too long to evaluate", validator_failed=True
        )
    except ValidationTimeout:
        return ArgumentProblem(
            f"schema validation took longer than {VALIDATION_TIMEOUT_SECONDS:g} s",
            validator_failed=True,
        )
    except Exception as crash:  # a validator crash must deny, whatever it is
        return ArgumentProblem(
            f"schema validation failed: {type(crash).__name__}", validator_failed=True
        )
    finally:
        del _running.deadlines
    if error is None:
        return None
    # "/config/password violates …", never "password: …": that reads as a `key: value` pair
    # and the redactor would mask the words after it.
    return ArgumentProblem(f"{_location(error)} {_violation(error)}")


# Keywords whose schema value (never the argument) is short and helps the model correct
# its call: "violates 'maxLength' (40)".
_BOUNDS = frozenset(
    {
        "type",
        "format",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
        "uniqueItems",
        "pattern",
        "enum",
        "const",
    }
)
_NAME = 40


def _under_secret(error: ValidationError) -> int | None:
    """How many parts of the error's path lead to its first secret-looking key (`password`,
    `auth`, `credentials`), or None. Everything under such a key is the secret, its keys
    too (the ledger's preview masks it whole), and the redactor collects only its values."""
    from ledger.redaction import SECRET_KEY_PATTERN

    for index, part in enumerate(error.absolute_path):
        if isinstance(part, str) and SECRET_KEY_PATTERN.search(part):
            return index + 1
    return None


def _location(error: ValidationError) -> str:
    path = list(error.absolute_path)
    shown = _under_secret(error)
    hidden = shown is not None and shown < len(path)
    parts = [str(part)[:_NAME] for part in path[:shown]] + (["…"] if hidden else [])
    return ("/" + "/".join(parts))[:200] if parts else "the arguments object"


def _violation(error: ValidationError) -> str:
    """What was violated, named by the schema's keyword, never by the offending value.

    jsonschema's own messages quote the instance (`{'nested': '…'} is not of type
    'string'`), and a reason is stored and sent: a secret the model put in the wrong place
    would travel with it.
    """
    keyword = error.validator
    if keyword is None or keyword is False:
        return "no value is allowed here (false schema)"
    keyword = str(keyword)
    value = error.validator_value
    if keyword == "required":
        present = error.instance if isinstance(error.instance, dict) else {}
        missing = [str(name)[:_NAME] for name in value if name not in present][:10]
        return f"violates 'required': missing {', '.join(repr(m) for m in missing)}"
    if keyword == "additionalProperties" and isinstance(value, list):
        if _under_secret(error) is not None:
            return "violates 'additionalProperties' (names under a secret-looking key not shown)"
        # Unexpected property names (not values) are what the model must drop.
        names = ", ".join(repr(str(name)[:_NAME]) for name in value[:10])
        return f"violates 'additionalProperties': unexpected {names}"
    if keyword in _BOUNDS and isinstance(value, str | int | float | bool | list):
        shown = canonical_json(value)
        if len(shown) <= 100:
            return f"violates {keyword!r} ({shown})"
    return f"violates {keyword!r}"
