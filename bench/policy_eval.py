"""Policy evaluation figures: compiled engine vs the seed's fnmatch loop vs cedarpy.

Run: /work/main/.venv/bin/python bench/policy_eval.py

Worst cases for a first-match engine:
1. 1,000 rules, the key matching only the last one; rules with distinct literal
   prefixes (what the prefix index is for), then rules that all start with a
   wildcard (the index cannot skip any: every compiled pattern is tried).
2. A 20-segment shell command whose every segment matches only the last rule.
3. The slowest pathological pattern (<= 1 KiB) against a 64 KiB subject.
4. Long shell scripts: one within the reading ceiling (read to its end), one past it
   (ASK; bench/shell_engine_ceiling.py measures the ceiling on adversarial inputs).
"""

import itertools
import os
import statistics
import sys
import time
from fnmatch import fnmatch
from importlib.metadata import version
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import cedarpy  # noqa: E402

from bench.harness import percentile  # noqa: E402
from governance.policy import MatchArgument, compile_policy  # noqa: E402
from governance.policy.globs import CompiledGlob, MatchTooExpensive  # noqa: E402

RULES = 1000
ROUNDS = 3000
SHELL = MatchArgument("command", "shell")


def seed_check_permission(rules, tool_name, args_str):
    """The design note's reference loop, verbatim."""
    key = f"{tool_name}:{args_str}"
    for rule in rules:
        if fnmatch(key, rule["pattern"]):
            return rule["action"]
    return "ASK"


def measure(function, rounds: int = ROUNDS) -> tuple[float, float]:
    """Median and p99 in microseconds of CPU time of one call: on a machine other processes
    share, wall-clock p99s measure the scheduler more than the engine."""
    for _ in range(min(200, rounds)):
        function()
    timings = []
    clock = time.thread_time_ns
    for _ in range(rounds):
        start = clock()
        function()
        timings.append(clock() - start)
    return statistics.median(timings) / 1000, percentile(timings, 0.99) / 1000


def cedar_like(glob: str) -> str:
    """A glob made only of literals and `*` as the body of a Cedar `like` string."""
    return glob.replace("\\", "\\\\").replace('"', '\\"')


def cedar_policy_set(rules: list[dict]) -> "cedarpy.PolicySet":
    effect = {"ALWAYS": "permit", "NEVER": "forbid"}
    text = []
    for rule in rules:
        if rule["action"] in effect and "?" not in rule["pattern"] and "[" not in rule["pattern"]:
            text.append(
                f"{effect[rule['action']]}(principal, action, resource) "
                f'when {{ context.key like "{cedar_like(rule["pattern"])}" }};'
            )
    return cedarpy.PolicySet.from_str("\n".join(text))


def cedar_request(key: str) -> dict:
    return {
        "principal": 'Agent::"bench"',
        "action": 'Action::"call"',
        "resource": 'Tool::"run_command"',
        "context": {"key": key},
    }


def report(title: str, rows: list[tuple[str, tuple[float, float]]]) -> None:
    print(f"\n{title}")
    engine_median = rows[0][1][0]
    for position, (name, (median, p99)) in enumerate(rows):
        ratio = f"   {median / engine_median:6.1f}x the engine's median" if position else ""
        print(f"  {name:48} median {median:8.1f} us   p99 {p99:8.1f} us{ratio}")


def last_rule_wins(rules: list[dict], key: str, title: str) -> None:
    policy = compile_policy(rules)
    tool, _, subject = key.partition(":")
    assert policy.evaluate_key(key).rule.index == RULES - 1
    assert seed_check_permission(rules, tool, subject) == "ALWAYS"
    policy_set = cedar_policy_set(rules)
    entities = cedarpy.Entities.from_json_str("[]")
    assert cedarpy.is_authorized(cedar_request(key), policy_set, entities).allowed
    report(
        title,
        [
            ("compiled engine (evaluate_key)", measure(lambda: policy.evaluate_key(key))),
            ("seed fnmatch loop", measure(lambda: seed_check_permission(rules, tool, subject))),
            (
                "cedarpy (PolicySet parsed once)",
                measure(
                    lambda: cedarpy.is_authorized(cedar_request(key), policy_set, entities), 500
                ),
            ),
        ],
    )


def shell_segments() -> None:
    rules = [{"pattern": f"run_command:cmd{i} *", "action": "NEVER"} for i in range(RULES - 1)]
    rules.append({"pattern": "run_command:ls *", "action": "ALWAYS"})
    separators = ["&&", "|", ";", "||"]
    parts = []
    for i in range(20):
        parts.append(f"ls -la /workspace/dir{i}")
        if i < 19:
            parts.append(separators[i % len(separators)])
    command = " ".join(parts)
    segments = [p for p in parts if p not in separators]
    policy = compile_policy(rules)
    evaluation = policy.evaluate("run_command", {"command": command}, SHELL)
    assert evaluation.verdict == "ALWAYS" and len(segments) == 20
    policy_set = cedar_policy_set(rules)
    entities = cedarpy.Entities.from_json_str("[]")
    requests = [cedar_request(f"run_command:{s}") for s in segments]
    # The engine remembers a command text it has evaluated under a compiled policy: each
    # call of the first row is a command it has not seen (the last directory numbered anew,
    # `/workspace/dir19` + n, still on the last rule).
    fresh = ({"command": f"{command}{n}"} for n in itertools.count())
    report(
        f"20-segment shell command ({len(command)} chars), every segment on the last of "
        f"{RULES} rules",
        [
            (
                "compiled engine (parse + 20 segments)",
                measure(lambda: policy.evaluate("run_command", next(fresh), SHELL), 1000),
            ),
            (
                "compiled engine, the same command again",
                measure(lambda: policy.evaluate("run_command", {"command": command}, SHELL), 1000),
            ),
            (
                "seed fnmatch loop, 20 pre-split segments",
                measure(
                    lambda: [seed_check_permission(rules, "run_command", s) for s in segments], 300
                ),
            ),
            (
                "seed fnmatch loop, raw string (not shell-aware)",
                measure(lambda: seed_check_permission(rules, "run_command", command), 1000),
            ),
            (
                "cedarpy batch of 20 pre-split segments",
                measure(lambda: cedarpy.is_authorized_batch(requests, policy_set, entities), 200),
            ),
        ],
    )


def pathological() -> None:
    n = 64 * 1024 - 2
    subjects = {
        "a*": "a" * n,
        "(ab)*": "ab" * (n // 2),
        "a*b": "a" * (n - 1) + "b",
        "b a*": "b" + "a" * (n - 1),
        "(aaab)*": "aaab" * (n // 4),
    }
    patterns = {
        "*a*a*...*a (512 stars)": "*a" * 512,
        "*a*a*...*b": "*a" * 511 + "*b",
        "*a?a?...b* (1000 atoms)": "*" + "a?" * 500 + "b*",
        "*aaa...ab* (1001 atoms)": "*" + "a" * 1000 + "b*",
        "*aaa...ab (tail)": "*" + "a" * 1000 + "b",
        "*[a][a]...b*": "*" + "[a]" * 300 + "b*",
        "??...?* (1000)": "?" * 1000 + "*",
        "*??...? (1000)": "*" + "?" * 1000,
        "*ab*": "*ab*",
        "*?b*": "*?b*",
        "*a?*": "*a?*",
        "*ab*ab*...*c": "*ab" * 340 + "*c",
        "[!b]...*": "[!b]" * 250 + "*",
        "*[!b][!b]*...*x": "*[!b][!b]" * 100 + "*x",
    }
    worst = (0.0, "", "", "")
    refused = 0
    for pattern_name, pattern in patterns.items():
        glob = CompiledGlob(pattern)
        for subject_name, subject in subjects.items():
            best = float("inf")
            outcome = ""
            for _ in range(5):
                start = time.perf_counter()
                try:
                    outcome = str(glob.matches(subject))
                except MatchTooExpensive:
                    outcome = "refused (ASK)"
                best = min(best, time.perf_counter() - start)
            refused += outcome.startswith("refused")
            if best > worst[0]:
                worst = (best, pattern_name, subject_name, outcome)
    seconds, pattern_name, subject_name, outcome = worst
    print(
        f"\nPathological patterns ({len(patterns)}) x 64 KiB subjects ({len(subjects)}):"
        f" worst {seconds * 1e6:.0f} us ({pattern_name} vs {subject_name}: {outcome});"
        f" {refused} pairs refused as too costly (fail closed)"
    )
    reference = "*" + "a?" * 500 + "b*"
    start = time.perf_counter()
    fnmatch("a" * n, reference)
    print(
        f"  for comparison, plain fnmatch on {reference[:8]}... vs a*: "
        f"{(time.perf_counter() - start) * 1e6:.0f} us"
    )


def large_script() -> None:
    policy = compile_policy(
        [
            {"pattern": "run_command:rm *", "action": "NEVER"},
            {"pattern": "run_command:ls *", "action": "ALWAYS"},
        ]
    )
    for count in (300, 8000):
        script = "ls -la; " * count + "rm -rf /"
        evaluate = lambda s=script: policy.evaluate("run_command", {"command": s}, SHELL)  # noqa: E731
        verdict = evaluate().verdict.value
        median, p99 = measure(evaluate, 20)
        print(
            f"\nA {len(script) / 1024:.1f} KiB shell script of {count + 1:,} commands, the last"
            f" `rm -rf /`: {verdict}, median {median / 1000:.1f} ms, p99 {p99 / 1000:.1f} ms"
            + ("  (over the reading ceiling: ASK)" if verdict == "ASK" else "")
        )


def main() -> None:
    print(
        f"Python {sys.version.split()[0]}, cedarpy {version('cedarpy')}, {RULES} rules;"
        f" CPU time per call; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    indexed = [
        {"pattern": f"run_command:cmd{i} *", "action": ("NEVER", "ALWAYS")[i % 2]}
        for i in range(RULES - 1)
    ]
    indexed.append({"pattern": "run_command:target *", "action": "ALWAYS"})
    last_rule_wins(
        indexed,
        "run_command:target --verbose /workspace",
        f"Last of {RULES} rules matches; distinct literal prefixes (`run_command:cmdN *`)",
    )
    unindexable = [
        {"pattern": f"run_command:*--opt{i} *", "action": ("NEVER", "ALWAYS")[i % 2]}
        for i in range(RULES - 1)
    ]
    unindexable.append({"pattern": "run_command:*--target *", "action": "ALWAYS"})
    last_rule_wins(
        unindexable,
        "run_command:build --target x86",
        f"Last of {RULES} rules matches; every rule starts `run_command:*` (index skips nothing)",
    )
    shell_segments()
    pathological()
    large_script()


if __name__ == "__main__":
    main()
