"""Shapes from the eighteenth shell-rules review (FINDINGS F151), the engine's side.

What a literal `echo` or `printf` writes into a shell's pipe is that shell's script (F140),
but only printf's `\\n` was decoded: dash's and zsh's `echo` decode every escape (bash's with
`-e`) and printf decodes octal and `\\x` ones too, so each of these ran `rm -rf victim` in the
oracle while the engine, reading one command, answered ASK where the rules' NEVER was due.
find's actions are in tests/shell_oracle/test_find_actions.py, run in the sandbox.
"""

import pytest

from governance.policy import Verdict
from tests.shell_corpus.policies import shell_verdict

DECODED = [
    ("sh", "echo 'ls\\nrm -rf victim' | sh"),
    ("zsh", "echo 'ls\\nrm -rf victim' | sh"),
    ("sh", "echo 'ls\\0012rm -rf victim' | sh"),
    ("bash", "echo -e 'ls\\nrm -rf victim' | sh"),
    ("bash", "printf 'ls\\012rm -rf victim' | sh"),
    ("bash", "printf 'ls\\x0arm -rf victim' | bash"),
    ("bash", "printf 'ls;\\nrm -rf victim\\n' | sh"),
]


@pytest.mark.parametrize(("shell", "script"), DECODED)
def test_what_echo_and_printf_decode_into_a_shell_s_pipe_meets_the_never_rule(shell, script):
    assert shell_verdict("review", script, shell) is Verdict.NEVER


def test_an_escape_that_decodes_to_no_separator_adds_no_command():
    # `\\n` is a backslash and an n to every echo: `ls\nrm` stays one word
    assert shell_verdict("review", "echo 'ls \\\\nrm -rf victim' | sh") is not Verdict.NEVER
