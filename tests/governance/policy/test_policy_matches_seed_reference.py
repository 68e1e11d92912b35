"""The compiled engine decides plain keys exactly like the seed's `fnmatch` loop."""

from fnmatch import fnmatch

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from governance.policy import MatchArgument, compile_policy

PATTERN_ALPHABET = "ab*?[]!:-/ ^\\"
KEY_ALPHABET = "ab:-/ []!*?^\\"
ACTIONS = ("ALWAYS", "ASK", "NEVER")


def seed_check_permission(rules, tool_name, args_str) -> str:
    key = f"{tool_name}:{args_str}"
    for rule in rules:
        if fnmatch(key, rule["pattern"]):
            return rule["action"].upper()
    return "ASK"


patterns = st.one_of(
    st.text(PATTERN_ALPHABET, min_size=1, max_size=10),
    # Keys share tool names, so indexed buckets and cross-bucket ordering both get exercised.
    st.builds(
        lambda tool, rest: f"{tool}:{rest}",
        st.sampled_from(["a", "ab", "b-a"]),
        st.text(PATTERN_ALPHABET, max_size=8),
    ),
)
rule_lists = st.lists(
    st.fixed_dictionaries({"pattern": patterns, "action": st.sampled_from(ACTIONS)}),
    max_size=12,
)
keys = st.tuples(
    st.sampled_from(["a", "ab", "b-a", "a*", "[a]"]), st.text(KEY_ALPHABET, max_size=10)
)


def test_plain_keys_get_the_seed_verdict_for_ten_thousand_pairs():
    compared = 0

    @settings(
        max_examples=600,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(rules=rule_lists, calls=st.lists(keys, min_size=20, max_size=20))
    def check(rules, calls):
        nonlocal compared
        policy = compile_policy(rules)
        # A text kind is a plain key too: the subject is the argument as is.
        kinds = {"a": MatchArgument("value", "text")}
        for tool, subject in calls:
            expected = seed_check_permission(rules, tool, subject)
            assert policy.evaluate_key(f"{tool}:{subject}", kinds).verdict == expected
            compared += 1

    check()
    assert compared >= 10_000


def test_long_subjects_take_the_piecewise_path_and_still_agree():
    """Subjects past the regex budget are matched piece by piece: same answers."""
    checked = 0

    @settings(max_examples=300, deadline=None, database=None, derandomize=True)
    @given(
        rules=st.lists(
            st.fixed_dictionaries(
                {
                    "pattern": st.lists(
                        st.text("ab?[]!-x", max_size=3), min_size=1, max_size=5
                    ).map(lambda pieces: "t:" + "*".join(pieces)),
                    "action": st.sampled_from(ACTIONS),
                }
            ),
            min_size=1,
            max_size=4,
        ),
        head=st.text("ab-x", max_size=8),
        unit=st.text("xy", min_size=1, max_size=3),
        tail=st.text("ab-x", max_size=8),
    )
    def check(rules, head, unit, tail):
        nonlocal checked
        subject = head + unit * (60_000 // len(unit)) + tail
        evaluation = compile_policy(rules).evaluate_key("t:" + subject)
        if evaluation.error:
            # Refused as too costly: fails closed, never silently allowed.
            assert evaluation.verdict == "ASK"
            return
        assert evaluation.verdict == seed_check_permission(rules, "t", subject)
        checked += 1

    check()
    assert checked >= 100


PIECEWISE_CASES = [
    ("t:*ab*ba*", "aba"),
    ("t:*ab*ba*", "abba"),
    ("t:*aa*aa", "aaa"),
    ("t:*aa*aa", "aaaa"),
    ("t:*a?*?a*", "aa"),
    ("t:*a?*?a*", "aaa"),
    ("t:*ab*[!x]b", "abb"),
    ("t:*ab*[!x]b", "abab"),
    ("t:x*ab*ab", "ab"),
    ("t:*ba*ab*ba", "bab"),
    ("t:*ba*ab*ba", "baabba"),
]


def test_long_subjects_with_overlapping_pieces_agree_with_the_seed():
    for pattern, ending in PIECEWISE_CASES:
        for subject in ("x" * 60_000 + ending, ending + "x" * 60_000, "x" + ending + "y" * 60_000):
            rules = [{"pattern": pattern, "action": "ALWAYS"}]
            verdict = compile_policy(rules).evaluate_key("t:" + subject).verdict
            assert verdict == seed_check_permission(rules, "t", subject), (pattern, ending)
