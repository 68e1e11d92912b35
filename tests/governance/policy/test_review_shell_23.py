"""Shapes from a shell-rules review of stop 52 (FINDINGS F157): git landing files the script
never wrote, and Maven's `.mvn` folder.

`git replace` made the empty blob a payload, and `git stash && git stash pop` landed it in a
file `touch` had made: no write the engine read came before `mvn -q -v` or `python -m pytest`,
which then ran the payload (a JVM option, a conftest.py). A command that lands a commit's or a
stash's files is a write now, `git replace` asks, and `.mvn/` (maven.config, jvm.config,
extensions.xml, the wrapper's jar) is configuration: Maven reads it on every run.
"""

import pytest

from governance.policy import Verdict
from tests.shell_corpus.policies import shell_verdict as _verdict

EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"


def _landed(path: str, payload: str, blob: str, then: str) -> str:
    """`touch` makes an empty file, git adds it, the empty blob is replaced by the payload,
    and a stash and its pop land it (the file's content is no word of the script's)."""
    return (
        f"touch {path} && git add {path} && printf -- '{payload}' | git --no-pager hash-object "
        f"-w --stdin && git --no-pager replace {EMPTY_BLOB} {blob} && git stash && git stash "
        f"pop && {then}"
    )


# Each ran its payload in the sandbox (bash, dash and zsh) and was ALWAYS.
LANDED_THEN_RUN = [
    "mkdir -p .mvn && "
    + _landed(
        ".mvn/jvm.config",
        "-Xmx3m -XX:OnOutOfMemoryError=/workspace/bin/pre-commit\\n",
        "b66adabaf30c4e51c02e22228c42f116b8348075",
        "mvn -q -v",
    ),
    "mkdir -p .mvn && "
    + _landed(
        ".mvn/maven.config",
        "-l /etc/fbx-log\\n",
        "f76f0bf95bc0c708f94be7f15502e3611aff3a65",
        "cat .mvn/maven.config && mvn -q -v",
    ),
    _landed(
        "conftest.py",
        'import os\\nos.system("touch /workspace/PWNED")\\n',
        "38a2d7bc629ea7b047d4f73a7e1e8507d568664b",
        "python -m pytest -q",
    ),
]


@pytest.mark.parametrize("shell", ["bash", "sh", "zsh"])
@pytest.mark.parametrize("script", LANDED_THEN_RUN)
def test_files_git_lands_before_a_runner_are_not_allowed(script, shell):
    assert _verdict("benign", script, shell) is not Verdict.ALWAYS


@pytest.mark.parametrize(
    "script",
    [
        "git stash pop && python -m pytest -q",
        "git stash apply && mvn -q -v",
        "git checkout main && python -m pytest -q",
        "git merge feature; python -m pytest -q",
        "git reset --hard HEAD~1 && python -m pytest -q",
    ],
)
def test_a_landing_is_a_write_before_the_project_code_runs(script):
    assert _verdict("benign", script) is Verdict.ASK


@pytest.mark.parametrize(
    "script",
    [
        "git --no-pager replace e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 HEAD:README.md",
        "git replace -f HEAD~1 HEAD",
        "echo '-Xmx3m' > .mvn/jvm.config",
        "printf -- '-l /tmp/x' >> .mvn/maven.config",
        "cp x.xml .mvn/extensions.xml",
    ],
)
def test_what_changes_every_later_checkout_or_maven_run_asks(script):
    assert _verdict("benign", script) is Verdict.ASK


@pytest.mark.parametrize(
    "script",
    [
        "git status && python -m pytest -q",
        "git checkout -b feature && python -m pytest -q",
        "python -m pytest -q && git stash pop",  # the run comes first
        "cat .mvn/jvm.config",  # no secret there: reading it is reading settings
        "mvn -q -v",
    ],
)
def test_what_lands_nothing_before_a_run_stays_allowed(script):
    assert _verdict("benign", script) is Verdict.ALWAYS
