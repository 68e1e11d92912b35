"""Shapes from the eighth shell-rules review (FINDINGS F89-F92): bash's own state, read by the
engine alone.

Each shape is proven in the oracle's sandbox by tests/shell_corpus/attacks.py ("the shell's
own state"): bash read the file a TZ assignment named; `pushd +N`, `builtin popd`, `command
popd` (and zsh's `cd +N`) moved the shell to a folder pushed earlier, where the next command
wrote; `declare`/`typeset`/`unset` of an `LC_` name with a subscript ran the subscript's
command substitution; `command -- CMD` was read as the lookup `command -v` and CMD never
matched. The constructs that run code from data (subscripts, `${x@P}`, `${!x}`,
namerefs, `mapfile -C`, traps, aliases, functions, `hash -p`, `exec -a`, `source`) held: they
are outside the subset or concerns ("code run from data" in the corpus). The commands agents
run with TZ, the directory stack and declarations stay ALWAYS.
"""

import pytest

from governance.policy import CompiledPolicy, Verdict, compile_policy
from tests.governance.policy.test_review_shell_2 import verdict
from tests.shell_corpus.policies import _document, builtins_policy, kinds, review_policy


def builtins_verdict(command: str, shell: str = "bash") -> Verdict:
    policy: CompiledPolicy = builtins_policy()
    return policy.evaluate("run_command", {"command": command}, kinds(shell)["run_command"]).verdict


REFUSED = [
    # F89: bash sets the time zone as soon as TZ is assigned, reading the file it names
    "TZ=/etc/passwd cd .",
    "TZ=:/etc/hostname true",
    "TZ=../../../../etc/passwd echo x",
    "echo x; TZ=/usr/share/zoneinfo/../../../etc/passwd pwd",
    "TZ=/etc/hostname printf '%(%F)T\\n' -1",
    "TZ=/etc/shadow date",
    "env TZ=/etc/shadow date",
    "env TZ=Europe/../../../../etc/shadow date",
]

BUILTINS_REFUSED = [
    # F90: the directory stack, and popd behind `builtin` or `command`
    ("pushd /etc && pushd /workspace && pushd +1 && touch x", "bash"),
    ("pushd /tmp >/dev/null && pushd /workspace >/dev/null && pushd +1 >/dev/null && touch x",
     "bash"),
    ("pushd /etc && pushd /workspace && builtin popd && touch x", "bash"),
    ("pushd /etc && pushd /workspace && command popd && touch x", "bash"),
    ("pushd /etc && pushd /workspace && command -p popd && touch x", "bash"),
    ("pushd /etc && pushd /workspace && time builtin popd && touch x", "bash"),
    ("pushd /etc && pushd /workspace && command -p cd /etc && touch x", "bash"),
    ("pushd /etc && pushd /workspace && cd +1 && touch x", "zsh"),
    # F91: a subscripted LC_ name is evaluated by declare, typeset, local, unset
    ("declare 'LC_x[$(rm -rf /workspace/victim)]=1'", "bash"),
    ("typeset -x 'LC_x[$(rm -rf /workspace/victim)]=1'", "bash"),
    ("declare -- 'LC_x[$(rm -rf /workspace/victim)]'", "bash"),
    ("declare LC_x=1; unset 'LC_x[$(rm -rf /workspace/victim)]'", "bash"),
    ("export 'LC_x[$(rm -rf /workspace/victim)]=1'", "bash"),
    ("typeset 'LC_x[$(rm -rf /workspace/victim)]=1'", "zsh"),
    # F92: `command --` ends command's options; it is no `-v` lookup
    ("command -- rm -rf /workspace/victim", "bash"),
    ("command -p -- rm -rf /workspace/victim", "bash"),
    ("command -- test -v 'a[$(rm -rf /workspace/victim)]'", "bash"),
    ("command -- printf -v 'a[$(rm -rf /workspace/victim)]' x", "bash"),
]  # fmt: skip


@pytest.mark.parametrize("command", REFUSED)
def test_a_time_zone_naming_a_file_is_not_allowed(command):
    assert verdict(command) is not Verdict.ALWAYS


@pytest.mark.parametrize(("command", "shell"), BUILTINS_REFUSED)
def test_the_directory_stack_and_subscripted_names_are_not_allowed(command, shell):
    assert builtins_verdict(command, shell) is not Verdict.ALWAYS


ALLOWED = [
    "TZ=UTC date",
    "TZ=Europe/Paris date +%H:%M",
    "TZ=:UTC date",
    "TZ=/usr/share/zoneinfo/UTC date",
    "TZ=UTC0 date",
    "printf '%(%F)T\\n' -1",
    "LANG=C sort names.txt",
    "cd src && ls",
]


@pytest.mark.parametrize("command", ALLOWED)
def test_time_zones_agents_set_stay_allowed(command):
    assert verdict(command) is Verdict.ALWAYS


BUILTINS_ALLOWED = [
    "pushd src && ls",
    "pushd src && touch x",
    "pushd src >/dev/null && touch x && popd",
    "cd src && touch x",
    "command -v ls",
    "command -- ls",
    "builtin echo x > /workspace/x",
    "export LANG=C.UTF-8",
    "declare -x LC_ALL=C",
    "unset LC_ALL",
]


@pytest.mark.parametrize("command", BUILTINS_ALLOWED)
def test_moving_and_declaring_inside_the_workspace_stays_allowed(command):
    assert builtins_verdict(command) is Verdict.ALWAYS


def test_concerns_behind_builtin_double_dash_hold_whatever_the_rule():
    document = _document("everything", [("run_command:*", "ALWAYS")])
    policy = compile_policy(document)
    for command in (
        "builtin -- printf -v 'a[$(rm -rf /workspace/victim)]' x",
        "builtin -- test -v 'a[$(rm -rf /workspace/victim)]'",
        "command -- test -v 'a[$(rm -rf /workspace/victim)]'",
    ):
        evaluation = policy.evaluate("run_command", {"command": command}, kinds()["run_command"])
        assert evaluation.verdict is not Verdict.ALWAYS, command


def test_command_double_dash_runs_what_follows_it():
    evaluation = review_policy().evaluate(
        "run_command", {"command": "command -- rm -rf /workspace/victim"}, kinds()["run_command"]
    )
    assert evaluation.verdict is Verdict.NEVER
