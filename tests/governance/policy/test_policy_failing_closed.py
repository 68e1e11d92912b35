"""Whatever goes wrong while matching, the answer is ASK (with an error), never ALWAYS."""

import pytest

from governance.policy import MatchArgument, Verdict, compile_policy

SHELL = MatchArgument("command", "shell")
KIB = 1024


def test_a_pattern_over_one_kib_fails_closed_when_a_call_reaches_it():
    policy = compile_policy(
        [
            {"pattern": "run_command:git status", "action": "ALWAYS"},
            {"pattern": "run_command:" + "x" * KIB, "action": "NEVER"},
            {"pattern": "run_command:*", "action": "ALWAYS"},
        ]
    )

    reached = policy.evaluate_key("run_command:ls")
    decided_before = policy.evaluate_key("run_command:git status")

    assert reached.verdict is Verdict.ASK
    assert "longer than 1024 bytes" in reached.error
    assert decided_before.verdict is Verdict.ALWAYS
    assert decided_before.error is None


def test_a_pattern_of_exactly_one_kib_is_evaluated():
    pattern = "t:" + "a" * (KIB - 3) + "*"
    policy = compile_policy([{"pattern": pattern, "action": "ALWAYS"}])

    assert policy.evaluate_key("t:" + "a" * (KIB - 3) + "b").verdict is Verdict.ALWAYS


def test_an_oversize_pattern_counts_in_utf8_bytes():
    policy = compile_policy([{"pattern": "t:" + "é" * 600, "action": "ALWAYS"}])

    assert policy.evaluate_key("t:" + "é" * 600).error is not None


@pytest.mark.parametrize("kind", [None, "text", "shell", "path"])
def test_a_subject_over_64_kib_is_ask_with_an_error(kind):
    policy = compile_policy([{"pattern": "*", "action": "ALWAYS"}])
    match_argument = MatchArgument("value", kind) if kind else None

    evaluation = policy.evaluate("t", {"value": "a" * (64 * KIB + 1)}, match_argument)

    assert evaluation.verdict is Verdict.ASK
    assert "larger than 64 KiB" in evaluation.error


def test_a_subject_of_exactly_64_kib_is_matched():
    policy = compile_policy([{"pattern": "t:*", "action": "ALWAYS"}])

    assert policy.evaluate("t", {"v": "a" * 64 * KIB}, MatchArgument("v")).verdict is Verdict.ALWAYS


def test_the_subject_bound_counts_utf8_bytes():
    policy = compile_policy([{"pattern": "*", "action": "ALWAYS"}])

    evaluation = policy.evaluate("t", {"v": "é" * (33 * KIB)}, MatchArgument("v"))

    assert evaluation.verdict is Verdict.ASK


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "no argument 'command'"),
        ({"command": ["rm", "-rf", "/"]}, "must be a string"),
        ("not a mapping", "no argument 'command'"),
    ],
)
def test_a_call_without_a_usable_argument_is_ask(arguments, message):
    policy = compile_policy([{"pattern": "*", "action": "ALWAYS"}])

    evaluation = policy.evaluate("run_command", arguments, SHELL)

    assert evaluation.verdict is Verdict.ASK
    assert message in evaluation.error


def test_an_unparseable_command_is_ask_even_under_a_catch_all_allow():
    policy = compile_policy([{"pattern": "run_command:*", "action": "ALWAYS"}])

    evaluation = policy.evaluate("run_command", {"command": "echo 'unterminated"}, SHELL)

    assert evaluation.verdict is Verdict.ASK
    assert "cannot be parsed" in evaluation.error


def test_an_unparseable_command_still_meets_never_rules():
    policy = compile_policy([{"pattern": "run_command:*rm -rf*", "action": "NEVER"}])

    evaluation = policy.evaluate("run_command", {"command": "rm -rf / 'unterminated"}, SHELL)

    assert evaluation.verdict is Verdict.NEVER


PATHOLOGICAL_PATTERNS = [
    "t:" + "*a" * 500,
    "t:" + "*a" * 500 + "*b",
    "t:*" + "a?" * 500 + "b*",
    "t:*" + "a" * 1000 + "b*",
    "t:*" + "[a]" * 300 + "b*",
    "t:*" + "a" * 1000 + "b",
    "t:" + "?" * 1000 + "*",
    "t:*a?*",
]
PATHOLOGICAL_SUBJECTS = ["a" * (64 * KIB - 2), "ab" * (32 * KIB - 1), "a" * (64 * KIB - 3) + "b"]


@pytest.mark.timeout(5)
@pytest.mark.parametrize("pattern", PATHOLOGICAL_PATTERNS)
def test_pathological_patterns_against_64_kib_subjects_finish_and_never_allow_wrongly(pattern):
    from fnmatch import fnmatchcase

    policy = compile_policy([{"pattern": pattern, "action": "ALWAYS"}])
    for subject in PATHOLOGICAL_SUBJECTS:
        evaluation = policy.evaluate_key("t:" + subject)
        if evaluation.error:
            assert evaluation.verdict is Verdict.ASK
            assert "too costly" in evaluation.error
        else:
            expected = Verdict.ALWAYS if fnmatchcase("t:" + subject, pattern) else Verdict.ASK
            assert evaluation.verdict is expected


@pytest.mark.timeout(5)
def test_a_costly_pattern_before_a_never_rule_is_refused_not_skipped():
    policy = compile_policy(
        [
            {"pattern": "t:*" + "a?" * 40 + "b*", "action": "ALWAYS"},
            {"pattern": "t:*", "action": "NEVER"},
        ]
    )

    evaluation = policy.evaluate_key("t:" + "a" * 60_000)

    assert evaluation.verdict is Verdict.ASK
    assert evaluation.error


@pytest.mark.timeout(5)
def test_a_long_script_within_the_reading_ceiling_is_read_to_its_end():
    policy = compile_policy(
        [
            {"pattern": "run_command:rm *", "action": "NEVER"},
            {"pattern": "run_command:ls *", "action": "ALWAYS"},
        ]
    )
    script = "ls -la; " * 300 + "rm -rf /"

    assert policy.evaluate("run_command", {"command": script}, SHELL).verdict is Verdict.NEVER


@pytest.mark.timeout(5)
def test_a_64_kib_script_over_the_reading_ceiling_is_ask_never_always():
    policy = compile_policy(
        [
            {"pattern": "run_command:rm *", "action": "NEVER"},
            {"pattern": "run_command:ls *", "action": "ALWAYS"},
        ]
    )
    script = "ls -la; " * 8000 + "rm -rf /"

    evaluation = policy.evaluate("run_command", {"command": script}, SHELL)

    assert evaluation.verdict is Verdict.ASK
    assert "steps read" in evaluation.error
    assert any("more than 1024 words," in (s.reason or "") for s in evaluation.segments)


def test_a_glob_whose_continuations_cost_too_much_to_match_fails_closed():
    # Each `*a*b…` rule must be walked over the whole start to know whether some file name
    # could complete it: past the call's step budget the answer is ASK, never ALWAYS.
    policy = compile_policy(
        [{"pattern": f"run_command:*a*b*c*d*e{i}", "action": "NEVER"} for i in range(200)]
        + [{"pattern": "run_command:ls *", "action": "ALWAYS"}]
    )

    costly = policy.evaluate("run_command", {"command": "ls " + "a" * 40 * KIB + " *"}, SHELL)
    cheap = policy.evaluate("run_command", {"command": "ls -la *"}, SHELL)

    assert costly.verdict is Verdict.ASK
    assert "more than 20000 steps" in costly.error
    assert cheap.verdict is Verdict.ASK  # `*a*b*c*d*e0` may match a file name: asked
    assert cheap.error is None
    assert "matches some of them" in " ".join(s.reason or "" for s in cheap.segments)
