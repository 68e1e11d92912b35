"""The policy editor carries each pattern through a one-line text box: what the box shows
must read back as exactly the pattern, whatever characters it holds."""

from hypothesis import given, settings
from hypothesis import strategies as st

from governance.portal.policy_forms import pattern_for_input, pattern_from_input


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from("\\u{}5c\n\r\t")))
def test_any_pattern_round_trips_through_the_text_box(pattern):
    shown = pattern_for_input(pattern)
    # A text box drops CR and LF; nothing the editor shows contains them.
    assert "\n" not in shown and "\r" not in shown
    assert pattern_from_input(shown) == pattern


def test_escapes_read_as_people_type_them():
    assert pattern_for_input("run_command:git status\ncurl x") == (
        "run_command:git status\\u{a}curl x"
    )
    assert pattern_from_input("run_command:a\\u{a}b") == "run_command:a\nb"
    assert pattern_for_input("run_command:echo \\u{41}") == "run_command:echo \\u{5c}u{41}"
    assert pattern_for_input("run_command:\\rm *") == "run_command:\\rm *"
