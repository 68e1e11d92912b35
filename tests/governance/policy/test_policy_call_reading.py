"""How calls become keys: segments, writes, call keys, escapes and remembered exact rules."""

from fnmatch import fnmatchcase

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from governance.policy import (
    MatchArgument,
    Verdict,
    call_key,
    compile_policy,
    escape_invisible,
    escape_pattern,
    normalise_path,
)

SHELL = MatchArgument("command", "shell")
PATH = MatchArgument("path", "path")
RULES = [
    {"pattern": "run_command:rm *", "action": "NEVER"},
    {"pattern": "run_command:ls *", "action": "ALWAYS"},
    {"pattern": "run_command:git status", "action": "ALWAYS"},
    {"pattern": "write_file:/workspace/*", "action": "ALWAYS"},
    {"pattern": "write_file:*", "action": "NEVER"},
]
POLICY = compile_policy(RULES)


def test_each_segment_of_a_compound_command_is_listed_with_its_rule():
    evaluation = POLICY.evaluate(
        "run_command", {"command": "ls -la && git status | rm -rf /"}, SHELL
    )

    listed = [(s.subject, s.verdict, s.rule_index) for s in evaluation.segments]
    assert ("run_command:ls -la", Verdict.ALWAYS, 1) in listed
    assert ("run_command:git status", Verdict.ALWAYS, 2) in listed
    assert ("run_command:rm -rf /", Verdict.NEVER, 0) in listed
    assert evaluation.verdict is Verdict.NEVER
    assert (evaluation.rule.index, evaluation.rule.pattern, evaluation.rule.action) == (
        0,
        "run_command:rm *",
        Verdict.NEVER,
    )


def test_a_segment_no_rule_matches_is_ask_and_decides_the_call():
    evaluation = POLICY.evaluate("run_command", {"command": "ls && curl evil.example"}, SHELL)

    assert evaluation.verdict is Verdict.ASK
    assert evaluation.rule is None
    assert ("run_command:curl evil.example", Verdict.ASK, None) in [
        (s.subject, s.verdict, s.rule_index) for s in evaluation.segments
    ]


def test_a_concern_is_listed_with_its_reason():
    evaluation = POLICY.evaluate("run_command", {"command": "LD_PRELOAD=/tmp/x.so ls -la"}, SHELL)

    assert evaluation.verdict is Verdict.ASK
    assert any(s.reason and "LD_PRELOAD" in s.reason for s in evaluation.segments)


def test_redirections_are_matched_under_the_configured_write_tool():
    policy = compile_policy(
        [
            {"pattern": "run_command:ls *", "action": "ALWAYS"},
            {"pattern": "fs_write:/etc/*", "action": "NEVER"},
        ]
    )
    tool = MatchArgument("command", "shell", write_tool="fs_write")

    evaluation = policy.evaluate("run_command", {"command": "ls -la > /etc/cron.d/x"}, tool)

    assert evaluation.verdict is Verdict.NEVER
    assert evaluation.rule.pattern == "fs_write:/etc/*"


def test_a_path_argument_is_matched_after_lexical_normalisation():
    evaluation = POLICY.evaluate("write_file", {"path": "/workspace/../etc/passwd"}, PATH)

    assert evaluation.verdict is Verdict.NEVER
    assert ("write_file:/etc/passwd", Verdict.NEVER, 4) in [
        (s.subject, s.verdict, s.rule_index) for s in evaluation.segments
    ]


@pytest.mark.parametrize(
    ("path", "normal"),
    [
        ("/workspace/../etc/passwd", "/etc/passwd"),
        ("/workspace/./a//b/", "/workspace/a/b"),
        ("//etc", "/etc"),
        ("/..", "/"),
        ("/../../etc", "/etc"),
        ("a/../../b", "../b"),
        ("./", "."),
        ("", "."),
        ("a/.../b", "a/.../b"),
    ],
)
def test_paths_are_normalised_lexically(path, normal):
    assert normalise_path(path) == normal


def test_without_a_match_argument_the_subject_is_canonical_json():
    policy = compile_policy(
        [{"pattern": 'send_email:{"body":"hi","to":"a@x"}', "action": "ALWAYS"}]
    )

    evaluation = policy.evaluate("send_email", {"to": "a@x", "body": "hi"}, None)

    assert evaluation.verdict is Verdict.ALWAYS


def test_a_text_argument_is_matched_as_is_and_other_arguments_are_ignored():
    policy = compile_policy([{"pattern": "send_email:*@example.com", "action": "ALWAYS"}])
    to = MatchArgument("to")

    assert (
        policy.evaluate("send_email", {"to": "a@example.com", "body": "x"}, to).verdict
        is Verdict.ALWAYS
    )
    assert policy.evaluate("send_email", {"to": "a@evil.example"}, to).verdict is Verdict.ASK


def test_evaluate_key_reads_the_rest_as_the_shell_argument_of_a_shell_tool():
    kinds = {"run_command": SHELL}

    assert POLICY.evaluate_key("run_command:ls x; rm -rf /", kinds).verdict is Verdict.NEVER
    assert POLICY.evaluate_key("run_command:ls x; rm -rf /").verdict is Verdict.ALWAYS  # plain key


@pytest.mark.parametrize(
    ("tool", "arguments", "match_argument", "key"),
    [
        ("send_email", {"to": "a", "body": "é"}, None, 'send_email:{"body":"é","to":"a"}'),
        ("send_email", {"to": "a@x"}, MatchArgument("to"), "send_email:a@x"),
        ("t", {"n": [1, 2]}, MatchArgument("n"), "t:[1,2]"),
        ("write_file", {"path": "/workspace/./a/../b"}, PATH, "write_file:/workspace/b"),
        ("run_command", {"command": "ls  -la;  rm x"}, SHELL, "run_command:ls  -la;  rm x"),
    ],
)
def test_call_keys(tool, arguments, match_argument, key):
    assert call_key(tool, arguments, match_argument) == key


@settings(max_examples=500, deadline=None, database=None, derandomize=True)
@given(literal=st.text(max_size=30), other=st.text(max_size=30))
def test_an_escaped_pattern_matches_exactly_its_literal(literal, other):
    pattern = escape_pattern(literal)

    assert fnmatchcase(literal, pattern)
    assert fnmatchcase(other, pattern) == (other == literal)


def test_a_remembered_exact_rule_allows_that_same_compound_command_next_time():
    command = "ls -la && curl https://example.com/status"
    key = call_key("run_command", {"command": command}, SHELL)
    remembered = compile_policy([{"pattern": escape_pattern(key), "action": "ALWAYS"}, *RULES])

    assert POLICY.evaluate("run_command", {"command": command}, SHELL).verdict is Verdict.ASK
    again = remembered.evaluate("run_command", {"command": command}, SHELL)
    assert again.verdict is Verdict.ALWAYS
    assert again.rule.index == 0
    other = remembered.evaluate("run_command", {"command": command + " -d x"}, SHELL)
    assert other.verdict is Verdict.ASK


def test_a_remembered_exact_rule_never_lifts_a_never():
    command = "ls -la; rm -rf /tmp/x"
    key = call_key("run_command", {"command": command}, SHELL)
    remembered = compile_policy([{"pattern": escape_pattern(key), "action": "ALWAYS"}, *RULES])

    assert remembered.evaluate("run_command", {"command": command}, SHELL).verdict is Verdict.NEVER


def test_a_wildcard_rule_matching_the_whole_command_does_not_lift_its_segments():
    policy = compile_policy([{"pattern": "run_command:ls *", "action": "ALWAYS"}])

    evaluation = policy.evaluate("run_command", {"command": "ls x; curl evil.example"}, SHELL)

    assert evaluation.verdict is Verdict.ASK


def test_invisible_characters_are_escaped_for_humans():
    text = "rm\u200b -rf \u202e/ \U000e0041 ok\tline\n"

    assert escape_invisible(text) == "rm\\u200b -rf \\u202e/ \\U000e0041 ok\tline\n"
    assert escape_invisible("plain ascii") == "plain ascii"
    assert escape_invisible("caf\u00e9 \u00a0x") == "caf\u00e9 \\u00a0x"


def test_an_invisible_character_makes_a_path_ask_even_inside_the_workspace():
    evaluation = POLICY.evaluate("write_file", {"path": "/workspace/re\u200bport.txt"}, PATH)

    assert evaluation.verdict is Verdict.ASK
    assert any("ZERO WIDTH SPACE" in (s.reason or "") for s in evaluation.segments)
