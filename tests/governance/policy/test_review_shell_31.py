"""Shapes from a shell-rules review (after F166): wrappers that write files of their own.

`flock` and `script` are read as wrappers that run what their arguments name (F140's
opaque wrappers): a rule must name them, and the command they run is judged as well. But
both also write files the rule for them does not name, and `script` with no `-c` runs an
interactive shell that reads its commands from standard input.

Seen in the bubblewrap sandbox (tests/shell_oracle/sandbox.py, bash, util-linux 2.38):
- `flock /tmp/fbx-newlock true` created /tmp/fbx-newlock (an empty file, 0644);
  `flock /etc/fbx-lock true` tried to (EROFS only because /etc is read-only there):
  flock opens its lock file with O_CREAT. `flock 9` (a descriptor) opens nothing.
- `script -q -c true /tmp/fbx-ts` wrote its typescript at /tmp/fbx-ts; `-O /tmp/fbx-ts2`,
  `-T /tmp/fbx-timing` and `--timing=/tmp/fbx-s5` wrote those files.
- `echo 'touch /tmp/fbx-s1; exit' | script -q -O /dev/null` ran `bash -i`, which read
  the pipe and ran `touch /tmp/fbx-s1` (written); `script -q` alone did the same and wrote
  ./typescript.
"""

import pytest

from governance.policy import Verdict
from tests.governance.policy.test_review_shell_30 import _verdict

FLOCK_CREATES_ITS_LOCK = [
    # seen: /tmp/fbx-newlock created; /etc/fbx-lock attempted (EROFS)
    "flock /tmp/fbx-newlock true",
    "flock /etc/cron.d/x true",
    "flock -x /tmp/newlock echo hi",
    "flock -n -w 5 /tmp/lock echo hi",
    "flock /tmp/lock -c 'echo hi'",
    "flock -o /tmp/lock --command 'echo hi'",
]


@pytest.mark.parametrize("script", FLOCK_CREATES_ITS_LOCK)
def test_flock_creates_the_lock_file_it_names(script):
    # flock opens FILE with O_CREAT before it runs the command: a write outside the
    # workspace that `flock *` does not name
    assert _verdict(script, "flock *") is not Verdict.ALWAYS


@pytest.mark.parametrize(
    "script", ["flock 9", "flock -u 9", "flock lock.file echo hi", "flock -x lock true"]
)
def test_flock_on_a_descriptor_or_a_lock_in_the_workspace_stays_allowed(script):
    assert _verdict(script, "flock *") is Verdict.ALWAYS


SCRIPT_WRITES_ITS_LOGS = [
    # seen: each file was written
    "script -q -c true /tmp/fbx-ts",
    "script -q -O /tmp/fbx-ts2 -c true",
    "script -q --log-out=/tmp/fbx-ts2 -c true",
    "script -q -T /tmp/fbx-timing -c true ts",
    "script -q --timing=/tmp/fbx-s5 -c true ts",
    "script -q -t/tmp/fbx-s5 -c true ts",
    "script -qc true -I /tmp/in ts",
    "script -q -B /tmp/both -c true ts",
    # more than one log of a kind: each is written
    "script -q -O /tmp/a -O ts -c true",
    # no file named: ./typescript, here /tmp/typescript
    "cd /tmp && script -q -c true",
]


@pytest.mark.parametrize("script", SCRIPT_WRITES_ITS_LOGS)
def test_script_writes_the_files_it_logs_to(script):
    assert _verdict(script, "script *") is not Verdict.ALWAYS


SCRIPT_RUNS_ITS_INPUT = [
    # seen: `bash -i` ran `touch /tmp/fbx-s1`
    "echo 'touch /tmp/fbx-s1; exit' | script -q -O /dev/null",
    "echo 'touch /tmp/fbx-s2; exit' | script -q",
    "script -q < cmds.txt",
    "script -q ts",
]


@pytest.mark.parametrize("script", SCRIPT_RUNS_ITS_INPUT)
def test_script_without_a_command_runs_a_shell_that_reads_its_input(script):
    assert _verdict(script, "script *") is not Verdict.ALWAYS


@pytest.mark.parametrize(
    "script", ["script -q -c 'echo hi' log.txt", "script -qc true -O out.log", "script -qc ls"]
)
def test_script_logging_into_the_workspace_stays_allowed(script):
    assert _verdict(script, "script *") is Verdict.ALWAYS
