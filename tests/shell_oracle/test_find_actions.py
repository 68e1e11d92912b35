"""find's actions under a rule that names them (FINDINGS F151).

`run_command:find * -exec *` is how an admin allows find's `-exec` (the benign rules alone
hold it at ASK). The engine read each action's words as a command of the script: `{}` as a
file of that name in the working directory (find puts the paths it finds there: `find
/etc/hostname -exec cp notes.txt {} \\;` wrote /etc/hostname), a `-execdir` action in the
script's folder (find runs it in each found path's folder), an action ended at any `+` (find
ends one only at a `+` right after `{}`), the next action in the folder a nested script's
`cd` had left, and a write of one action apart from the project's code another runs. Each
shape runs in the sandbox, does there what the rules do not allow, and is not ALWAYS.
"""

import pytest

from governance.policy import Verdict
from tests.shell_corpus.policies import benign_policy_with
from tests.shell_oracle.oracle import Kind, Oracle

_CONFTEST = 'import os; os.system(\\"touch /etc/fluidbox-x\\")'

ATTACKS = [
    (
        "find * -exec *",
        r'cd /etc && find . -maxdepth 0 -exec sh -c "cd /workspace" \; -exec mkdir fluidbox-x \;',
    ),
    (
        "find * -exec *",
        r'find . -maxdepth 0 -exec bash -c "cd victim/inner" \; -exec mkdir ../../fluidbox-x \;',
    ),
    ("find * -exec *", r"find /etc/hostname -exec cp notes.txt {} \;"),
    ("find * -exec *", r"find /etc -maxdepth 0 -exec cp -r src {} +"),
    ("find * -exec *", r"find /etc -maxdepth 0 -exec cp notes.txt {}/fluidbox-x \;"),
    ("find * -execdir *", r"find /etc/hostname -execdir mkdir fluidbox-x \;"),
    ("find * -exec *", r"find . -maxdepth 0 -exec mkdir + ../etc/fluidbox-x \;"),
    (
        "find * -exec *",
        f"find . -maxdepth 0 -exec sh -c \"echo '{_CONFTEST}' > tests/conftest.py\" \\; "
        "-exec python3 -m pytest -q tests \\;",
    ),
]

# What the rule is for: still allowed, and run in the sandbox with nothing unallowed.
ALLOWED = [
    ("find * -exec *", r'find . -name "*.py" -exec grep -l import {} +'),
    ("find * -exec *", r"find src -type f -exec wc -l {} \;"),
    ("find * -exec *", r"find . -maxdepth 1 -exec ls -d {} +"),
    ("find * -exec *", r"find . -maxdepth 0 -exec mkdir made \;"),
    ("find * -execdir *", r"find src -name '*.py' -execdir ls \;"),
]


def _oracle(rule: str) -> Oracle:
    return Oracle(benign_policy_with(rule))


@pytest.mark.parametrize("shell", ["bash", "sh", "zsh"])
@pytest.mark.parametrize(("rule", "script"), ATTACKS)
def test_find_s_actions_are_read_where_and_with_what_find_runs_them(rule, script, shell):
    assert _oracle(rule).evaluate(script, shell).verdict is not Verdict.ALWAYS


@pytest.mark.parametrize(("rule", "script"), ALLOWED)
def test_find_s_actions_in_the_workspace_are_still_allowed(rule, script):
    assert _oracle(rule).evaluate(script).verdict is Verdict.ALWAYS


@pytest.mark.usefixtures("sandbox")
@pytest.mark.parametrize("rule", ["find * -exec *", "find * -execdir *"])
def test_each_shape_does_in_the_sandbox_what_the_rules_do_not_allow(rule):
    oracle = _oracle(rule)
    attacks = [(script, "bash") for r, script in ATTACKS if r == rule]
    allowed = [(script, "bash") for r, script in ALLOWED if r == rule]

    judged = oracle.judge(attacks + allowed, run_all=True)

    for judgement in judged[: len(attacks)]:
        assert judgement.evaluation.verdict is not Verdict.ALWAYS, judgement.report()
        written = [d.subject for d in judgement.unallowed if d.kind is Kind.FILE_WRITTEN]
        outside = [k for k in written if not k.startswith("write_file:/workspace/")]
        assert outside, judgement.report()
    for judgement in judged[len(attacks) :]:
        assert judgement.evaluation.verdict is Verdict.ALWAYS, judgement.report()
        # find's own children are what the rule names; each one a command the rules allow
        for found in judgement.unallowed:
            assert found.kind is Kind.CHILD_PROCESS, judgement.report()
            parent, _, child = found.subject.partition(" → ")
            assert parent.startswith("find "), judgement.report()
            assert oracle.literal.verdict(f"run_command:{child}") == "ALWAYS", judgement.report()
