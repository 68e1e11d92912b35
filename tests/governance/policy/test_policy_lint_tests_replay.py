"""Lint warnings, a policy's own tests, and what-if replay against recorded calls."""

from fnmatch import fnmatchcase

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from governance.policy import (
    MatchArgument,
    PolicyDocument,
    RecordedCall,
    Rule,
    Verdict,
    compile_policy,
    lint,
    replay,
    run_tests,
)

SHELL = MatchArgument("command", "shell")
KNOWN = {
    "run_command": SHELL,
    "write_file": MatchArgument("path", "path"),
    "read_email": None,
    "github.create_issue": None,
}


def rules(*pairs: tuple[str, str]) -> list[Rule]:
    return [Rule(pattern, Verdict(action)) for pattern, action in pairs]


def codes(warnings) -> list[tuple[int, str]]:
    return [(w.rule_index, w.code) for w in warnings]


@pytest.mark.parametrize(
    ("earlier", "later"),
    [
        ("*", "run_command:rm *"),
        ("run_command:*", "run_command:git status"),
        ("run_command:git *", "run_command:git push *"),
        ("run_command:rm *", "run_command:rm -rf /"),
        ("read_email:*", "read_email:*"),
        ("*.txt", "write_file:/workspace/*.txt"),
        ("write_file:/w*.txt", "write_file:/workspace/?.txt"),
        ("run_command:ls*", "run_command:ls[*]"),
    ],
)
def test_a_rule_an_earlier_rule_covers_is_reported_as_shadowed(earlier, later):
    warnings = lint(rules((earlier, "NEVER"), (later, "ALWAYS")), {})

    assert codes(warnings) == [(1, "shadowed")]
    assert earlier in warnings[0].message


@pytest.mark.parametrize(
    ("earlier", "later"),
    [
        ("run_command:git push *", "run_command:git *"),
        ("run_command:git *", "run_command:gi*"),
        ("*.txt", "*.txt*"),
        ("a*b", "a?"),
        ("a*ab", "a?b"),
        ("run_command:ls *", "run_command:ls"),
    ],
)
def test_a_rule_that_still_decides_some_call_is_not_reported(earlier, later):
    assert lint(rules((earlier, "NEVER"), (later, "ALWAYS")), {}) == []


@settings(max_examples=400, deadline=None, database=None, derandomize=True)
@given(
    earlier=st.text("ab*?[]", min_size=1, max_size=6),
    later=st.text("ab*?[]", min_size=1, max_size=6),
    keys=st.lists(st.text("ab[]*?", max_size=7), min_size=30, max_size=30),
)
def test_a_reported_shadow_is_never_false(earlier, later, keys):
    warnings = lint(rules((earlier, "NEVER"), (later, "ALWAYS")), {})
    if (1, "shadowed") in codes(warnings):
        for key in keys:
            assert not fnmatchcase(key, later) or fnmatchcase(key, earlier)


def test_a_rule_for_no_known_tool_is_reported():
    warnings = lint(
        rules(
            ("run_comand:rm *", "NEVER"), ("read_*", "ALWAYS"), ("github.*:x", "ASK"), ("*", "ASK")
        ),
        KNOWN,
    )

    assert codes(warnings) == [(0, "unknown-tool")]


def test_the_tool_check_is_skipped_when_no_tools_are_known():
    assert lint(rules(("nothing:*", "NEVER")), {}) == []


@pytest.mark.parametrize(
    "pattern",
    [
        "run_command:git *",
        "run_command:find *",
        "run_command:cat /workspace/*",
        "run_command:*",
        "*",
    ],
)
def test_a_broad_always_rule_on_a_shell_tool_is_flagged(pattern):
    warnings = lint(rules((pattern, "ALWAYS")), KNOWN)

    assert (0, "shell-argument-injection") in codes(warnings)


def test_the_injection_warning_names_the_acting_options_that_still_need_naming():
    (warning,) = lint(rules(("run_command:git *", "ALWAYS")), KNOWN)

    assert "git's acting options (" in warning.message
    assert "still need a rule that names them" in warning.message


@pytest.mark.parametrize(
    ("pattern", "admitted"),
    [
        ("run_command:find * -delete", "find's acting options: -delete (deletes files)"),
        ("run_command:git log --output=/workspace/*", "git's acting options: --output (writes"),
        ("run_command:tar -xzf *", "tar's acting options: -x (writes files)"),
        ("run_command:python -m pytest *", "python's acting options: -m (runs a program)"),
    ],
)
def test_lint_lists_which_rule_admits_which_programs_acting_options(pattern, admitted):
    warnings = lint(rules((pattern, "ALWAYS")), KNOWN)

    (acting,) = [w for w in warnings if w.code == "acting-option"]
    assert acting.rule_number == 1
    assert acting.message.startswith(f"{pattern!r} admits {admitted}")


def test_lint_reports_a_rule_that_names_a_configuration_path():
    warnings = lint(rules(("write_file:/workspace/.git/hooks/*", "ALWAYS")), KNOWN)

    assert [w.code for w in warnings] == ["config-path"]
    assert ".git/hooks" in warnings[0].message


@pytest.mark.parametrize(
    ("pattern", "action"),
    [
        ("run_command:git status", "ALWAYS"),
        ("run_command:git *", "NEVER"),
        ("read_email:*", "ALWAYS"),
    ],
)
def test_exact_shell_rules_and_non_allowing_rules_are_not_flagged(pattern, action):
    assert lint(rules((pattern, action)), KNOWN) == []


def test_an_oversize_pattern_and_an_invisible_character_are_reported():
    warnings = lint(rules(("t:" + "x" * 1100, "NEVER"), ("run_command:ls\u200b *", "NEVER")), {})

    assert codes(warnings) == [(0, "pattern-too-long"), (1, "invisible-character")]


POLICY_WITH_TESTS = """
name: tested
rules:
  - {pattern: "run_command:rm *", action: NEVER}
  - {pattern: "run_command:ls *", action: ALWAYS}
tests:
  - {call: "run_command:rm -rf /", expect: NEVER}
  - {call: "run_command:ls x; rm -rf /", expect: NEVER}
  - {tool: run_command, arguments: {command: "ls -la"}, expect: ALWAYS}
  - {call: "run_command:curl x", expect: ALWAYS}
"""


def test_run_tests_reports_each_failing_test_with_what_it_got():
    document = PolicyDocument.from_yaml(POLICY_WITH_TESTS)

    failures = run_tests(document, {"run_command": SHELL})

    assert [(f.call, f.expected, f.got) for f in failures] == [
        ("run_command:curl x", Verdict.ALWAYS, Verdict.ASK)
    ]


def test_run_tests_without_kinds_matches_plain_keys():
    failures = run_tests(PolicyDocument.from_yaml(POLICY_WITH_TESTS), {})

    assert ("run_command:ls x; rm -rf /", Verdict.NEVER, Verdict.ALWAYS) in [
        (f.call, f.expected, f.got) for f in failures
    ]


def test_replay_lists_exactly_the_calls_whose_verdict_changes():
    old = compile_policy([{"pattern": "run_command:ls *", "action": "ALWAYS"}])
    new = compile_policy(
        [
            {"pattern": "run_command:rm *", "action": "NEVER"},
            {"pattern": "run_command:ls -la", "action": "ALWAYS"},
        ]
    )
    calls = [
        RecordedCall("run_command", {"command": "ls -la"}, SHELL, id=1),
        RecordedCall("run_command", {"command": "ls -R /"}, SHELL, id=2),
        RecordedCall("run_command", {"command": "rm -rf /"}, SHELL, id=3),
        RecordedCall("run_command", {"command": "curl x"}, SHELL, id=4),
        RecordedCall("read_email", {"folder": "inbox"}, None, id=5),
    ]

    changes = replay(old, new, calls)

    assert [(c.id, c.call_key, c.old_verdict, c.new_verdict) for c in changes] == [
        (2, "run_command:ls -R /", Verdict.ALWAYS, Verdict.ASK),
        (3, "run_command:rm -rf /", Verdict.ASK, Verdict.NEVER),
    ]


def test_replay_reads_unreadable_recorded_calls_as_ask_without_failing():
    old = compile_policy([{"pattern": "*", "action": "ALWAYS"}])
    new = compile_policy([])
    calls = [
        RecordedCall("run_command", {}, SHELL, id="no-command"),
        RecordedCall("t", {"a": 1}, None, id="plain"),
    ]

    changes = replay(old, new, calls)

    assert [(c.id, c.call_key, c.old_verdict, c.new_verdict) for c in changes] == [
        ("plain", 't:{"a":1}', Verdict.ALWAYS, Verdict.ASK)
    ]
