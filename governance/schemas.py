"""Frozen tool schemas: the freeze-time guard and network-free, crash-safe validators."""

import functools
import math
import threading
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
_REF_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")


UNSTORABLE_ARGUMENTS = (
    "arguments may not contain NUL characters (\\u0000), unpaired UTF-16 surrogates or "
    "numbers too large for a double (1e999)"
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
    range (`1e999`, which `json.loads` reads as infinity) is not JSON once written back.
    Every way in (REST's `ArgumentsField`, the MCP endpoint) refuses such arguments before
    the gate records anything."""
    for item in json_scalars(arguments):
        if isinstance(item, str):
            if "\x00" in item:
                return False
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    return False
        elif isinstance(item, float) and not math.isfinite(item):
            return False
    return True


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


def _safe_search(pattern: str, text: str) -> bool:
    try:
        return regex.search(pattern, text, timeout=PATTERN_TIMEOUT_SECONDS) is not None
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


SafeValidator = validators.extend(
    Draft202012Validator,
    {
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
    },
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
    try:
        error = next(iter(validator_for(schema).iter_errors(arguments)), None)
    except PatternTimeout as timeout:
        return ArgumentProblem(
            f"schema pattern {timeout.args[0]!r} took too long to evaluate", validator_failed=True
        )
    except Exception as crash:  # a validator crash must deny, whatever it is
        return ArgumentProblem(
            f"schema validation failed: {type(crash).__name__}", validator_failed=True
        )
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


def _location(error: ValidationError) -> str:
    parts = [str(part)[:_NAME] for part in error.absolute_path]
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
        # Unexpected property names (not values) are what the model must drop.
        names = ", ".join(repr(str(name)[:_NAME]) for name in value[:10])
        return f"violates 'additionalProperties': unexpected {names}"
    if keyword in _BOUNDS and isinstance(value, str | int | float | bool | list):
        shown = canonical_json(value)
        if len(shown) <= 100:
            return f"violates {keyword!r} ({shown})"
    return f"violates {keyword!r}"
