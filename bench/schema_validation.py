"""What the schema stage's guards cost: fluidbox's validator against plain jsonschema.

Run: /work/main/.venv/bin/python bench/schema_validation.py

The gate validates every call's arguments against the tool's frozen schema with
`governance.schemas.argument_problem`: jsonschema's Draft 2020-12 validator whose every
keyword first asks whether the call is past its deadline (a `$ref` fan-out can take 2**30
steps), whose patterns run in `regex` with a time limit, and which measures the arguments'
size first. Plain `Draft202012Validator.iter_errors` on the same schema and arguments is the
floor. Three shapes: a small tool call (an issue tracker's create_issue), a wide object (200
properties, each with a pattern), and a list of 1,000 objects.
"""

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jsonschema import Draft202012Validator  # noqa: E402

from governance.schemas import argument_problem, validator_for  # noqa: E402

SMALL = (
    {
        "type": "object",
        "properties": {
            "title": {"type": "string", "maxLength": 200},
            "body": {"type": "string"},
            "labels": {"type": "array", "items": {"type": "string", "pattern": "^[a-z-]+$"}},
            "priority": {"enum": ["low", "normal", "high"]},
        },
        "required": ["title"],
        "additionalProperties": False,
    },
    {
        "title": "Login times out on slow links",
        "body": "Seen on 3G.",
        "labels": ["bug", "auth"],
        "priority": "high",
    },
)
WIDE = (
    {
        "type": "object",
        "properties": {
            f"field_{n}": {"type": "string", "pattern": "^[A-Za-z0-9 ]*$"} for n in range(200)
        },
    },
    {f"field_{n}": f"value {n}" for n in range(200)},
)
LONG = (
    {
        "type": "object",
        "properties": {
            "rows": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"id": {"type": "integer"}, "name": {"type": "string"}},
                    "required": ["id"],
                },
            }
        },
    },
    {"rows": [{"id": n, "name": f"row {n}"} for n in range(1000)]},
)


def per_call_us(function, repeat: int) -> float:
    """The median of five rounds, in microseconds per call."""
    rounds = []
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(repeat):
            function()
        rounds.append((time.perf_counter() - started) / repeat * 1e6)
    return statistics.median(rounds)


def main() -> None:
    # "keywords": the validator alone (each keyword's deadline check, patterns in `regex`);
    # "whole": argument_problem, with the size check (the arguments' canonical JSON) too.
    print(f"{'shape':<8} {'plain jsonschema':>18} {'keywords':>12} {'whole':>12} {'ratio':>7}")
    for label, (schema, arguments), repeat in (
        ("small", SMALL, 2000),
        ("wide", WIDE, 200),
        ("long", LONG, 50),
    ):
        plain = Draft202012Validator(schema)
        assert next(plain.iter_errors(arguments), None) is None
        assert argument_problem(schema, arguments) is None
        guarded = validator_for(schema)  # compiled once per schema, as the gate's cache does
        floor = per_call_us(lambda: next(plain.iter_errors(arguments), None), repeat)  # noqa: B023
        keywords = per_call_us(lambda: next(guarded.iter_errors(arguments), None), repeat)  # noqa: B023
        whole = per_call_us(lambda: argument_problem(schema, arguments), repeat)  # noqa: B023
        print(
            f"{label:<8} {floor:>15.0f} us {keywords:>9.0f} us {whole:>9.0f} us"
            f" {whole / floor:>6.2f}x"
        )


if __name__ == "__main__":
    main()
