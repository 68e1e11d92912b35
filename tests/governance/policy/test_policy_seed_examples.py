"""The design note's and the SPEC's example policies, verdict by verdict."""

from fnmatch import fnmatch

import pytest

from governance.policy import MatchArgument, PolicyDocument, Verdict, compile_policy, run_tests

SEED_RULES = [
    {"pattern": "read_email:*", "action": "ALWAYS"},
    {"pattern": "send_email:*", "action": "ASK"},
    {"pattern": "run_command:rm *", "action": "NEVER"},
    {"pattern": "run_command:git push *", "action": "ASK"},
    {"pattern": "run_command:git status", "action": "ALWAYS"},
    {"pattern": "write_file:*/workspace/*", "action": "ALWAYS"},
    {"pattern": "write_file:*", "action": "NEVER"},
]

SPEC_POLICY = """
name: default
autonomous_fallback: deny      # what require_approval becomes in autonomous runs
approval_timeout: 300          # seconds; on timeout the call is denied
rules:                         # first match wins; no match => ASK
  - pattern: "read_email:*"
    action: ALWAYS
  - pattern: "send_email:*"
    action: ASK
  - pattern: "run_command:rm *"
    action: NEVER
  - pattern: "run_command:git status"
    action: ALWAYS
  - pattern: "write_file:/workspace/*"
    action: ALWAYS
  - pattern: "write_file:*"
    action: NEVER
tests:                         # optional; a version whose tests fail is not saved
  - call: "run_command:rm -rf /"
    expect: NEVER
"""


def seed_check_permission(rules, tool_name, args_str) -> str:
    """The design note's reference implementation, verbatim but for returning the name."""
    key = f"{tool_name}:{args_str}"
    for rule in rules:
        if fnmatch(key, rule["pattern"]):
            return rule["action"].upper()
    return "ASK"


SEED_EXAMPLES = [
    ("read_email", '{"folder":"inbox"}', Verdict.ALWAYS, 0),
    ("send_email", '{"to":"boss@example.com"}', Verdict.ASK, 1),
    ("run_command", "rm -rf /", Verdict.NEVER, 2),
    ("run_command", "rm notes.txt", Verdict.NEVER, 2),
    ("run_command", "git push origin main", Verdict.ASK, 3),
    ("run_command", "git push origin main --force", Verdict.ASK, 3),
    ("run_command", "git status", Verdict.ALWAYS, 4),
    ("run_command", "git status --short", Verdict.ASK, None),
    ("write_file", "/home/agent/workspace/notes.md", Verdict.ALWAYS, 5),
    ("write_file", "/etc/passwd", Verdict.NEVER, 6),
    ("calendar_create", '{"title":"standup"}', Verdict.ASK, None),
]


@pytest.mark.parametrize(("tool", "subject", "expected", "rule_index"), SEED_EXAMPLES)
def test_the_seed_policy_gives_the_seed_verdicts(tool, subject, expected, rule_index):
    evaluation = compile_policy(SEED_RULES).evaluate_key(f"{tool}:{subject}")

    assert evaluation.verdict is expected
    assert seed_check_permission(SEED_RULES, tool, subject) == expected
    assert (evaluation.rule.index if evaluation.rule else None) == rule_index


def test_no_match_is_ask_not_always():
    evaluation = compile_policy(SEED_RULES).evaluate_key("delete_database:prod")

    assert evaluation.verdict is Verdict.ASK
    assert evaluation.rule is None


def test_first_match_wins_like_a_firewall():
    rules = [
        {"pattern": "write_file:/workspace/*", "action": "ALWAYS"},
        {"pattern": "write_file:*", "action": "NEVER"},
    ]
    reversed_rules = list(reversed(rules))

    assert compile_policy(rules).evaluate_key("write_file:/workspace/a").verdict is Verdict.ALWAYS
    assert compile_policy(reversed_rules).evaluate_key("write_file:/workspace/a").verdict is (
        Verdict.NEVER
    )


SPEC_CALLS = [
    ("read_email", {"folder": "inbox"}, None, Verdict.ALWAYS),
    ("send_email", {"to": "a@example.com", "body": "hi"}, None, Verdict.ASK),
    ("run_command", {"command": "rm -rf /"}, MatchArgument("command", "shell"), Verdict.NEVER),
    ("run_command", {"command": "git status"}, MatchArgument("command", "shell"), Verdict.ALWAYS),
    ("run_command", {"command": "git push"}, MatchArgument("command", "shell"), Verdict.ASK),
    ("write_file", {"path": "/workspace/a.txt"}, MatchArgument("path", "path"), Verdict.ALWAYS),
    (
        "write_file",
        {"path": "/workspace/../etc/passwd"},
        MatchArgument("path", "path"),
        (Verdict.NEVER),
    ),
    ("write_file", {"path": "/tmp/x"}, MatchArgument("path", "path"), Verdict.NEVER),
]


@pytest.mark.parametrize(("tool", "arguments", "match_argument", "expected"), SPEC_CALLS)
def test_the_spec_policy_gives_the_spec_verdicts(tool, arguments, match_argument, expected):
    policy = compile_policy(PolicyDocument.from_yaml(SPEC_POLICY))

    assert policy.evaluate(tool, arguments, match_argument).verdict is expected


def test_the_spec_policy_passes_its_own_tests():
    document = PolicyDocument.from_yaml(SPEC_POLICY)

    assert document.autonomous_fallback == "deny"
    assert document.approval_timeout == 300
    assert run_tests(document, {"run_command": MatchArgument("command", "shell")}) == []
