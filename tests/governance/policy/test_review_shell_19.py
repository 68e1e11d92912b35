"""Shapes from the sixteenth shell-rules review (FINDINGS F149).

The exact reading kept, from command to command, what the script had done so far — a
file written, a link made, a folder moved — and judged each command by what came before
it in the text. The commands of a pipeline and a job sent to the background run beside
the others, so what comes later in the text may act first; a command written a second
time was taken from its first reading, made before the script's link; a nested shell's
runner counted only when it was the inner script's last command; and a `mv` in a nested
shell was held against the inner shell's folders only.
"""

import pytest

from governance.policy import Verdict
from tests.shell_corpus.policies import shell_verdict as _verdict

_LINK_BEHIND = "mkdir a && touch d && cp -s /workspace/d a/l && mv d e && mkdir d"
_CODE = "echo 'import os; os.system(\"rm -rf /workspace/victim\")'"
_MAKEFILE = "printf 'all:\\n\\ttouch /tmp/fluidbox-x\\n' > Makefile"


RAN_IN_THE_SANDBOX = [
    # a runner beside a write: a pipeline, a background job
    ("review", f"python -m pytest -q & {_CODE} > tests/conftest.py"),
    ("review", f"python -m pytest -q | {_CODE} > tests/test_app.py"),
    ("benign", f"sleep 1 && make & {_MAKEFILE}"),
    ("benign", "python -m pytest -q & cp notes.txt tests/conftest.py"),
    ("review", f"sh -c 'python -m pytest -q &'; {_CODE} > tests/conftest.py"),
    # a move or a link beside the commands whose paths it changes
    ("benign", "sleep 1 && mv a/b c & mkdir -p a/b && cd a/b && sleep 2 && echo x > ../../x"),
    ("builtins", "sleep 1 && mv a/b c & mkdir -p a/b && cd a/b && touch ../../tmp/fluidbox-x"),
    ("benign", "mkdir -p a/b && cd a/b && sleep 2 && touch ../../tmp/x & sleep 1 && mv a/b c"),
    ("benign", f"sleep 1 && touch a/l/../../tmp/fluidbox-x & {_LINK_BEHIND}"),
    ("benign", f"sleep 1 && cat < a/l/../../etc/hostname & {_LINK_BEHIND}"),
    # a command written again after the script made a link
    ("benign", f"touch a/l/../../tmp/x; {_LINK_BEHIND}; touch a/l/../../tmp/x"),
    ("builtins", f"echo x > a/l/../../etc/x; {_LINK_BEHIND}; echo x > a/l/../../etc/x"),
    ("benign", f"cat < a/l/../../etc/hostname; {_LINK_BEHIND}; cat < a/l/../../etc/hostname"),
    (
        "benign",
        "mkdir etc && touch etc/hostname && mkdir a && cd /workspace/a && cp -P h ../h; "
        "cd /workspace/a && cp -s ../etc/hostname h && cp -P h ../h && cd /workspace && "
        "echo x >> h",
    ),
    (
        "benign",
        "cp -P a/h h; mkdir etc && touch etc/hostname && mkdir a && cd /workspace/a && "
        "cp -s ../etc/hostname h && cd /workspace && cp -P a/h h && echo x >> h",
    ),
    # a runner that is not the nested script's last command
    ("review", f'{_CODE} > tests/conftest.py; sh -c "python -m pytest -q; echo done"'),
    ("benign", f'{_MAKEFILE} && bash -c "make; true"'),
    ("benign", f'{_MAKEFILE} && env sh -c "make && true"'),
    # a nested shell that moves the outer shell's folder
    ("benign", 'mkdir -p a/b && cd a/b && sh -c "cd /workspace && mv a/b c" && touch ../../x'),
    ("builtins", 'mkdir -p a/b && cd a/b && sh -c "cd ../.. && mv a/b c" && echo x > ../../x'),
    # a job sent away by `setsid -f`, or left by a nested script behind a pipe (hunt 54)
    ("benign", "setsid -f make > out.txt; echo 'all:; rm -f notes.txt' > Makefile"),
    ("benign", "timeout 5 setsid --fork make; echo x > Makefile"),
    ("benign", "sh -c 'python -m pytest -q > out.txt &' | cat; echo x > conftest.py"),
]


@pytest.mark.parametrize(("policy", "command"), RAN_IN_THE_SANDBOX)
@pytest.mark.parametrize("shell", ["bash", "sh", "zsh"])
def test_what_runs_beside_or_after_a_change_is_not_allowed(policy, command, shell):
    assert _verdict(policy, command, shell) is not Verdict.ALWAYS


@pytest.mark.parametrize(
    "command",
    [
        "pytest -q 2>&1 | tee pytest.log",
        # what is written after the runner in its pipeline is the runner's own output
        "npm test 2>&1 | tee test_output.txt",
        "cargo test | head -50 > summary.txt",
        "python -m pytest | grep FAIL > fails.txt",
        "make 2>&1 | tee build-output.txt",
        "pytest -q 2>&1 | tee /workspace/pytest.log",
        "cargo build 2>&1 | tee /workspace/build.log | tail -5",
        "git log --oneline | head -5 > out.txt",
        "ls | wc -l",
        "sleep 1 & ls",
        "touch a.txt; touch a.txt",
        "sh -c 'ls; echo done'",
        "mkdir -p a/b && cd a/b && sh -c 'ls' && touch ../x",
    ],
)
def test_commands_beside_each_other_that_change_nothing_for_the_others_stay_allowed(command):
    assert _verdict("benign", command, "bash") is Verdict.ALWAYS


@pytest.mark.parametrize(
    "command",
    [
        "pytest | cat evil.txt > conftest.py",  # cat writes a file's text, not the pipe's
        "echo x | tee conftest.py | pytest",  # written before the runner in its pipeline
        "ls | cp -rs /workspace/src link",
        "ls & mv src s2",
        "sleep 1 && cat src/app.py & cp -s /workspace/victim link",
    ],
)
def test_a_write_a_runner_may_load_or_a_link_beside_others_is_asked(command):
    assert _verdict("benign", command, "bash") is Verdict.ASK
