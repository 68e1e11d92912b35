"""A policy as admins write it: rules, fallback, timeout and tests; parsed, exported, digested.

Parsing collects every problem with its location (`rule 3: action: ...`, counted from 1
as on every other surface) and raises one `PolicyError`. Actions and the fallback are read
case-insensitively.
A pattern over 1 KiB loads (so an export of an existing policy still reads back)
but can never be evaluated: a call that reaches it fails closed (ASK, with an
error), and lint reports it. The digest is the SHA-256 of the canonical JSON of
the normalised document (sorted keys, no spaces), so formatting and comments
do not change it and export → import keeps it.
"""

import hashlib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fluidbox.canonical import canonical_json
from governance.policy.verdicts import Verdict
from governance.policy.yaml_format import YamlProblem, flow, load_yaml, quote

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
FALLBACKS = ("allow", "deny")
MAX_APPROVAL_TIMEOUT = 7 * 24 * 3600
MAX_RULES = 10_000
_DOCUMENT_KEYS = ("name", "autonomous_fallback", "approval_timeout", "rules", "tests")


class PolicyError(ValueError):
    """The document is not a valid policy; `problems` lists every reason."""

    def __init__(self, problems: Sequence[str]):
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))


@dataclass(frozen=True)
class Rule:
    pattern: str
    action: Verdict

    def to_dict(self) -> dict[str, str]:
        return {"pattern": self.pattern, "action": self.action.value}


@dataclass(frozen=True)
class PolicyTest:
    """`call: "tool:subject"` or `tool:` + `arguments:`, and the verdict expected."""

    __test__ = False

    expect: Verdict
    call: str | None = None
    tool: str | None = None
    arguments: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        if self.call is not None:
            return {"call": self.call, "expect": self.expect.value}
        return {
            "tool": self.tool,
            "arguments": dict(self.arguments or {}),
            "expect": self.expect.value,
        }


@dataclass(frozen=True)
class PolicyDocument:
    name: str
    rules: Sequence[Rule] = ()
    autonomous_fallback: str = "deny"
    approval_timeout: int = 300
    tests: Sequence[PolicyTest] = field(default=())

    def __post_init__(self) -> None:
        # dataclasses.replace(document, rules=[...]) must give a document like any other.
        object.__setattr__(self, "rules", tuple(self.rules))
        object.__setattr__(self, "tests", tuple(self.tests))
        problems = _check_header(self.name, self.autonomous_fallback, self.approval_timeout)
        problems += [
            f"rules[{i}]: must be a Rule"
            for i, r in enumerate(self.rules)
            if not isinstance(r, Rule)
        ]
        if problems:
            raise PolicyError(problems)

    @classmethod
    def from_yaml(cls, text: str) -> "PolicyDocument":
        try:
            data = load_yaml(text)
        except YamlProblem as problem:
            raise PolicyError([str(problem)]) from None
        return cls.from_dict(data)

    @classmethod
    def from_dict(cls, data: Any) -> "PolicyDocument":
        if not isinstance(data, Mapping):
            raise PolicyError(["the policy must be a mapping with name, rules, ..."])
        problems = [
            f"unknown key {key!r} (expected one of {', '.join(_DOCUMENT_KEYS)})"
            for key in data
            if key not in _DOCUMENT_KEYS
        ]
        name = data.get("name")
        fallback = data.get("autonomous_fallback", "deny")
        if isinstance(fallback, str):
            fallback = fallback.lower()
        timeout = data.get("approval_timeout", 300)
        problems += _check_header(name, fallback, timeout)
        rules = _parse_list(data.get("rules", []), "rules", parse_rule, problems, MAX_RULES)
        tests = _parse_list(data.get("tests", []), "tests", _parse_test, problems, MAX_RULES)
        if problems:
            raise PolicyError(problems)
        return cls(name, tuple(rules), fallback, timeout, tuple(tests))

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "autonomous_fallback": self.autonomous_fallback,
            "approval_timeout": self.approval_timeout,
            "rules": [rule.to_dict() for rule in self.rules],
            "tests": [test.to_dict() for test in self.tests],
        }

    def digest(self) -> str:
        return hashlib.sha256(canonical_json(self.to_dict()).encode("utf-8")).hexdigest()

    def to_yaml(self) -> str:
        lines = [
            f"name: {quote(self.name)}",
            f"autonomous_fallback: {self.autonomous_fallback}",
            f"approval_timeout: {self.approval_timeout}",
        ]
        if not self.rules:
            lines.append("rules: []")
        else:
            lines.append("rules:  # first match wins; no match => ASK")
        for rule in self.rules:
            lines += [f"  - pattern: {quote(rule.pattern)}", f"    action: {rule.action.value}"]
        if self.tests:
            lines.append("tests:")
        for test in self.tests:
            if test.call is not None:
                lines.append(f"  - call: {quote(test.call)}")
            else:
                lines.append(f"  - tool: {quote(test.tool or '')}")
                lines.append(f"    arguments: {flow(dict(test.arguments or {}))}")
            lines.append(f"    expect: {test.expect.value}")
        return "\n".join(lines) + "\n"


def _check_header(name: Any, fallback: Any, timeout: Any) -> list[str]:
    problems = []
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        problems.append(
            "name: required; 1-100 characters of letters, digits, '_', '.', '-' "
            f"starting with a letter or digit (got {name!r})"
        )
    if fallback not in FALLBACKS:
        problems.append(f"autonomous_fallback: must be allow or deny (got {fallback!r})")
    if isinstance(timeout, bool) or not isinstance(timeout, int):
        problems.append(f"approval_timeout: must be a whole number of seconds (got {timeout!r})")
    elif not 1 <= timeout <= MAX_APPROVAL_TIMEOUT:
        problems.append(f"approval_timeout: must be between 1 and {MAX_APPROVAL_TIMEOUT} seconds")
    return problems


def _parse_list(value: Any, where: str, parse, problems: list[str], limit: int) -> list:
    if not isinstance(value, list):
        problems.append(f"{where}: must be a list")
        return []
    if len(value) > limit:
        problems.append(f"{where}: at most {limit} entries")
        return []
    parsed = []
    # Numbered from 1, as the gate's reasons, lint and the editor number rules ("rule 3").
    label = where.removesuffix("s")
    for index, item in enumerate(value):
        try:
            parsed.append(parse(item))
        except PolicyError as error:
            problems.extend(
                f"{label} {index + 1}: {problem.removeprefix(f'{label}: ')}"
                for problem in error.problems
            )
    return parsed


def parse_verdict(value: Any, field_name: str) -> Verdict:
    if isinstance(value, str) and value.upper() in Verdict.__members__:
        return Verdict(value.upper())
    raise PolicyError([f"{field_name}: must be one of ALWAYS, ASK, NEVER (got {value!r})"])


def parse_rule(item: Any) -> Rule:
    """One `{pattern, action}` mapping as a Rule; raises PolicyError."""
    if not isinstance(item, Mapping):
        raise PolicyError(["rule: must be a mapping with pattern and action"])
    problems = [
        f"{key}: unknown key (expected pattern, action)"
        for key in item
        if key not in ("pattern", "action")
    ]
    pattern = item.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        problems.append(f"pattern: must be a non-empty string (got {pattern!r})")
    elif _has_surrogate(pattern):
        problems.append("pattern: contains a lone surrogate")
    elif "\x00" in pattern:
        problems.append("pattern: contains a NUL character")
    try:
        action = parse_verdict(item.get("action"), "action")
    except PolicyError as error:
        problems += error.problems
    if problems:
        raise PolicyError(problems)
    return Rule(pattern, action)


def _parse_test(item: Any) -> PolicyTest:
    if not isinstance(item, Mapping):
        raise PolicyError(["test: must be a mapping with call (or tool, arguments) and expect"])
    allowed = ("call", "tool", "arguments", "expect")
    problems = [
        f"{key}: unknown key (expected {', '.join(allowed)})" for key in item if key not in allowed
    ]
    call, tool, arguments = item.get("call"), item.get("tool"), item.get("arguments")
    if (call is None) == (tool is None):
        problems.append("call: give either call or tool (with arguments)")
    elif call is not None and (not isinstance(call, str) or _has_surrogate(call)):
        problems.append(f"call: must be a string like 'tool:subject' (got {call!r})")
    elif call is not None and "\x00" in call:
        problems.append("call: contains a NUL character")
    elif call is not None and arguments is not None:
        problems.append("arguments: only with tool, not with call")
    elif tool is not None and (not isinstance(tool, str) or "\x00" in tool or _has_surrogate(tool)):
        problems.append(f"tool: must be a string without NUL characters (got {tool!r})")
    if tool is not None and arguments is not None and not isinstance(arguments, Mapping):
        problems.append("arguments: must be a mapping")
    elif arguments is not None and (problem := _json_problem(arguments)):
        problems.append(f"arguments: {problem}")
    try:
        expect = parse_verdict(item.get("expect"), "expect")
    except PolicyError as error:
        problems += error.problems
    if problems:
        raise PolicyError(problems)
    if tool is not None:
        return PolicyTest(expect, tool=tool, arguments=dict(arguments or {}))
    return PolicyTest(expect, call=call)


def _json_problem(value: Any, depth: int = 0) -> str | None:
    if depth > 32:
        return "nested too deeply"
    if value is None or isinstance(value, bool | int):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else "numbers must be finite"
    if isinstance(value, str):
        if "\x00" in value:
            return "contains a NUL character"
        return "contains a lone surrogate" if _has_surrogate(value) else None
    if isinstance(value, list):
        return next((p for v in value if (p := _json_problem(v, depth + 1))), None)
    if isinstance(value, Mapping):
        if not all(isinstance(k, str) for k in value):
            return "keys must be strings"
        if any("\x00" in k or _has_surrogate(k) for k in value):
            return "keys contain a NUL character or a lone surrogate"
        return next((p for v in value.values() if (p := _json_problem(v, depth + 1))), None)
    return f"{type(value).__name__} is not a JSON value (quote dates and times)"


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
