"""Policy YAML: what loads, what is refused with a message, and export → import."""

import dataclasses
import hashlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from governance.policy import PolicyDocument, PolicyError, PolicyTest, Rule, Verdict

VALID = """
name: default
autonomous_fallback: allow
approval_timeout: 120
rules:
  - pattern: "read_email:*"
    action: always
  - pattern: "run_command:rm *"
    action: NEVER
tests:
  - call: "run_command:rm -rf /"
    expect: NEVER
  - tool: send_email
    arguments: {to: "a@example.com", cc: [1, 2.5, null, true]}
    expect: ASK
"""


def problems_of(text: str) -> str:
    with pytest.raises(PolicyError) as raised:
        PolicyDocument.from_yaml(text)
    return str(raised.value)


def test_a_valid_policy_loads_with_actions_normalised():
    document = PolicyDocument.from_yaml(VALID)

    assert document.name == "default"
    assert document.autonomous_fallback == "allow"
    assert document.approval_timeout == 120
    assert document.rules == (
        Rule("read_email:*", Verdict.ALWAYS),
        Rule("run_command:rm *", Verdict.NEVER),
    )
    assert document.tests[0] == PolicyTest(Verdict.NEVER, call="run_command:rm -rf /")
    assert document.tests[1].arguments == {"to": "a@example.com", "cc": [1, 2.5, None, True]}


def test_defaults_are_deny_and_five_minutes():
    document = PolicyDocument.from_yaml("name: p\nrules: []\n")

    assert (document.autonomous_fallback, document.approval_timeout, document.rules) == (
        "deny",
        300,
        (),
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: p\nrulez: []\n", "unknown key 'rulez'"),
        (
            "name: p\nrules:\n  - {pattern: 'a:*', action: SOMETIMES}\n",
            "rule 1: action: must be one of",
        ),
        (
            "name: p\nrules:\n  - {pattern: 'a:*', action: ASK, note: x}\n",
            "rule 1: note: unknown key",
        ),
        (
            "name: p\nrules:\n  - {pattern: 12, action: ASK}\n",
            "rule 1: pattern: must be a non-empty string",
        ),
        (
            "name: p\nrules:\n  - {pattern: '', action: ASK}\n",
            "rule 1: pattern: must be a non-empty string",
        ),
        ("name: p\nrules:\n  - just-a-string\n", "rule 1: must be a mapping"),
        ("name: p\nrules: {a: b}\n", "rules: must be a list"),
        ("name: p\napproval_timeout: '300'\n", "approval_timeout: must be a whole number"),
        ("name: p\napproval_timeout: true\n", "approval_timeout: must be a whole number"),
        ("name: p\napproval_timeout: 0\n", "approval_timeout: must be between 1"),
        ("name: p\nautonomous_fallback: maybe\n", "autonomous_fallback: must be allow or deny"),
        ("rules: []\n", "name: required"),
        ("name: 'has space'\n", "name: required"),
        ("name: p\ntests:\n  - {call: 'a:b'}\n", "test 1: expect: must be one of"),
        ("name: p\ntests:\n  - {call: 'a:b', tool: a, expect: ASK}\n", "give either call or tool"),
        (
            "name: p\ntests:\n  - {tool: a, arguments: [1], expect: ASK}\n",
            "arguments: must be a mapping",
        ),
        (
            "name: p\ntests:\n  - {tool: a, arguments: {d: 2024-01-01}, expect: ASK}\n",
            "not a JSON value",
        ),
        (
            "name: p\ntests:\n  - {tool: a, arguments: {x: .nan}, expect: ASK}\n",
            "numbers must be finite",
        ),
        ("- a\n- b\n", "must be a mapping"),
        ("name: p\nname: q\n", "duplicate key 'name'"),
        (
            "name: p\nrules:\n  - pattern: *\n    action: NEVER\n",
            "quote patterns that start with `*`",
        ),
        ("name: &n p\nrules: []\n", "anchors (&name) are not allowed"),
        (
            "name: p\nrules:\n  - {<<: {pattern: 'a:*'}, action: ASK}\n",
            "merge keys (<<) are not allowed",
        ),
        ("name: p\n---\nname: q\n", "invalid YAML"),
        ("name: !!python/object:os.system p\n", "invalid YAML"),
        ("name: [unclosed\n", "invalid YAML"),
    ],
)
def test_bad_documents_are_refused_with_a_message_that_points_at_the_problem(text, message):
    assert message in problems_of(text)


def test_every_problem_is_reported_at_once():
    problems = problems_of(
        "name: p\nrules:\n  - {pattern: 'a:*', action: X}\n  - {pattern: 3, action: ASK}\n"
    )

    assert "rule 1: action" in problems
    assert "rule 2: pattern" in problems


def test_a_huge_file_is_refused_before_parsing():
    assert "larger than" in problems_of("name: p\n#" + "x" * (1024 * 1024) + "\n")


def test_a_pattern_over_one_kib_still_loads():
    document = PolicyDocument.from_yaml(
        f"name: p\nrules:\n  - {{pattern: 'a:{'x' * 2000}', action: NEVER}}\n"
    )

    assert len(document.rules[0].pattern) == 2002


def test_the_digest_is_sha256_of_canonical_json():
    document = PolicyDocument.from_yaml(VALID)
    canonical = json.dumps(
        document.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )

    assert document.digest() == hashlib.sha256(canonical.encode()).hexdigest()


def test_formatting_and_comments_do_not_change_the_digest():
    reformatted = """
# the same policy, written differently
name: "default"
approval_timeout: 120
autonomous_fallback: ALLOW
rules: [{action: ALWAYS, pattern: "read_email:*"}, {pattern: "run_command:rm *", action: never}]
tests:
  - {expect: NEVER, call: "run_command:rm -rf /"}
  - {tool: send_email, expect: ask, arguments: {cc: [1, 2.5, ~, yes], to: "a@example.com"}}
"""
    assert (
        PolicyDocument.from_yaml(reformatted).digest() == PolicyDocument.from_yaml(VALID).digest()
    )


def test_any_change_of_a_rule_changes_the_digest():
    document = PolicyDocument.from_yaml(VALID)
    changed = dataclasses.replace(
        document, rules=[Rule("read_email:*", Verdict.ASK), *document.rules[1:]]
    )

    assert changed.digest() != document.digest()


def test_export_then_import_gives_the_same_document_and_digest():
    document = PolicyDocument.from_yaml(VALID)
    exported = document.to_yaml()

    assert PolicyDocument.from_yaml(exported) == document
    assert PolicyDocument.from_yaml(exported).digest() == document.digest()
    assert exported.startswith(
        'name: "default"\nautonomous_fallback: allow\napproval_timeout: 120\n'
    )
    assert '  - pattern: "run_command:rm *"\n    action: NEVER\n' in exported


def test_export_shows_invisible_characters_as_escapes():
    document = PolicyDocument("p", [Rule("run_command:ls\u200b *", Verdict.ALWAYS)])
    exported = document.to_yaml()

    assert "\\u200b" in exported
    assert "\u200b" not in exported
    assert PolicyDocument.from_yaml(exported).digest() == document.digest()


def test_to_dict_round_trips_through_from_dict():
    document = PolicyDocument.from_yaml(VALID)

    assert PolicyDocument.from_dict(json.loads(json.dumps(document.to_dict()))) == document


def test_replace_with_a_list_of_rules_gives_a_normal_document():
    document = PolicyDocument.from_yaml(VALID)
    updated = dataclasses.replace(document, rules=[Rule("a:[*]", Verdict.ALWAYS), *document.rules])

    assert isinstance(updated.rules, tuple)
    assert PolicyDocument.from_yaml(updated.to_yaml()) == updated


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=12),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.text(
                st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=5
            ),
            children,
            max_size=3,
        )
    ),
    max_leaves=8,
)
any_text = st.text(
    st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), min_size=1, max_size=20
)


@settings(max_examples=300, deadline=None, database=None, derandomize=True)
@given(
    patterns=st.lists(any_text, max_size=5),
    actions=st.lists(st.sampled_from(list(Verdict)), min_size=5, max_size=5),
    call=any_text,
    arguments=st.dictionaries(
        st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=5),
        json_values,
        max_size=3,
    ),
    timeout=st.integers(min_value=1, max_value=604_800),
)
def test_any_document_survives_export_and_import(patterns, actions, call, arguments, timeout):
    document = PolicyDocument(
        "p-1",
        [Rule(p, a) for p, a in zip(patterns, actions, strict=False)],
        "allow",
        timeout,
        [
            PolicyTest(Verdict.ASK, call=call),
            PolicyTest(Verdict.NEVER, tool="t", arguments=arguments),
        ],
    )

    imported = PolicyDocument.from_yaml(document.to_yaml())

    assert imported.digest() == document.digest()


@pytest.mark.parametrize(
    ("yaml_text", "problem"),
    [
        ('name: p\nrules:\n  - {pattern: "run_command:ls\\0", action: ALWAYS}\n', "pattern"),
        ('name: p\ntests:\n  - {call: "run_command:ls\\0", expect: ASK}\n', "call"),
        ('name: p\ntests:\n  - {tool: t, arguments: {a: "x\\0"}, expect: ASK}\n', "arguments"),
        ('name: p\ntests:\n  - {tool: "t\\0", arguments: {}, expect: ASK}\n', "tool"),
    ],
)
def test_a_nul_character_anywhere_in_a_policy_is_refused(yaml_text, problem):
    with pytest.raises(PolicyError) as refused:
        PolicyDocument.from_yaml(yaml_text)

    assert any(
        p.startswith(f"test 1: {problem}") or p.startswith(f"rule 1: {problem}")
        for p in refused.value.problems
    ), refused.value.problems
    assert "NUL" in str(refused.value)
