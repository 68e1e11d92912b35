"""Shapes from the shell-rules review under a broad git policy (FINDINGS F15).

`run_command:git *` ALWAYS with `git push*` NEVER is what an admin writes to let an agent
use git: it must not admit git's subcommands that write outside the workspace (a clone's
or an init's directory, a worktree, a bundle, checked-out files, marks) or run man. Each
shape runs in bash in the sandbox: it does there what the rules do not allow, and the
engine does not say ALWAYS for it.
"""

import pytest

from governance.policy import PolicyDocument, Verdict, compile_policy
from tests.shell_oracle.oracle import Kind, Oracle, shows

GIT_RULES = [
    ("run_command:git push*", "NEVER"),
    ("run_command:git *", "ALWAYS"),
    ("read_file:/workspace/*", "ALWAYS"),
    ("read_file:*", "NEVER"),
    ("write_file:/workspace/*", "ALWAYS"),
    ("write_file:*", "NEVER"),
]
SHAPES = [
    ("git clone -q . /tmp/x", Kind.FILE_WRITTEN, "/tmp/x"),
    ("git init -q /tmp/x", Kind.FILE_WRITTEN, "/tmp/x"),
    ("git worktree add /tmp/x", Kind.FILE_WRITTEN, "/tmp/x"),
    ("git bundle create /tmp/x HEAD", Kind.FILE_WRITTEN, "/tmp/x"),
    ("git checkout-index -a --prefix=/tmp/x/", Kind.FILE_WRITTEN, "/tmp/x"),
    ("git fast-export --export-marks=/tmp/x HEAD", Kind.FILE_WRITTEN, "/tmp/x"),
    ("git help log", Kind.CHILD_PROCESS, "man git-log"),
    ("git log --help", Kind.CHILD_PROCESS, "man git-log"),
]


@pytest.fixture(scope="module")
def oracle():
    document = PolicyDocument.from_dict(
        {"name": "git-star", "rules": [{"pattern": p, "action": a} for p, a in GIT_RULES]}
    )
    return Oracle(compile_policy(document))


@pytest.mark.parametrize("script", [script for script, _, _ in SHAPES])
def test_git_star_does_not_admit_what_git_writes_or_runs_elsewhere(oracle, script):
    assert oracle.evaluate(script).verdict is not Verdict.ALWAYS


@pytest.mark.usefixtures("sandbox")
def test_each_shape_does_in_bash_what_the_rules_do_not_allow(oracle):
    judgements = oracle.judge([(script, "bash") for script, _, _ in SHAPES], run_all=True)

    for judgement, (_, kind, subject) in zip(judgements, SHAPES, strict=True):
        assert shows(judgement.observation, kind, subject), judgement.report()
        assert judgement.unallowed, judgement.report()
        assert not judgement.disagreements, judgement.report()


# `git clone -q /workspace` was here: a clone puts a commit's files in the working tree,
# whatever their names, and needs a rule that names `clone` now (F152).
IN_THE_WORKSPACE = ("git status", "git log -5", "git diff HEAD", "git branch -a")


@pytest.mark.parametrize("script", IN_THE_WORKSPACE)
def test_git_star_still_allows_git_in_the_workspace(oracle, script):
    assert oracle.evaluate(script).verdict is Verdict.ALWAYS
