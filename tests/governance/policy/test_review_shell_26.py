"""Shapes from a shell-rules review of stop 54 (after F160): the other programs the benign rules
allow that run no project code, and what the project's files they read decide.

tsc (from TypeScript's manual; not installed where the oracle runs): with no input files it
compiles the project of the closest `tsconfig.json` (the current folder's, then its parents'),
whose `outDir`, `outFile`, `declarationDir` and `tsBuildInfoFile` are where it writes, anywhere.
`printf '{"compilerOptions":{"outDir":"/tmp/o"}}' > tsconfig.json && tsc` was ALWAYS.

git (run in the oracle's sandbox, bash, git 2.39, with the fixture's `.git` moved away: a
workspace that is no repository): git in a folder with no `.git` takes the folder itself for a
bare repository when it holds HEAD, objects/ and refs/, and reads its `config`. `mkdir -p
objects refs && printf 'ref: refs/heads/m\\n' > HEAD && printf '[remote "x"]\\n\\turl =
/workspace/victim\\n\\tuploadpack = touch /tmp/pwn;\\n' > config && git fetch x` was ALWAYS (F21
held it after a `cd` and with `--bare` only); git ran `/bin/sh -c touch /tmp/pwn …` and /tmp/pwn
was written (`write_file:*` is NEVER). With the fixture's `.git` in place git uses that one.

A copy into a folder (`cp SRC DIR/`, `cp SRC DIR`, `cp -t DIR SRC`, `cp -r kit/. DIR/`) was read
as a write of DIR alone, not of DIR/NAME: `cp kit/ruff.toml src/ && ruff check -q src` was
ALWAYS, and in the sandbox (ruff 0.17.5 bound in read-only) ruff wrote its cache at the
`cache-dir` of the copied file (/tmp/rc, or /etc/rc: EROFS). The same copy put a configuration
path past its rule: `cp kit/CLAUDE.md src/`, `cp kit/config.toml .cargo/` were ALWAYS under the
benign rules, while `cp kit/CLAUDE.md src/CLAUDE.md` asks.
"""

import pytest

from governance.policy import Verdict
from tests.shell_corpus.policies import benign_policy_with, kinds
from tests.shell_corpus.policies import shell_verdict as _verdict

BARE = "mkdir -p objects refs && printf 'ref: refs/heads/m\\n' > HEAD && "
UPLOADPACK = (
    "printf '[remote \"x\"]\\n\\turl = /workspace/victim\\n\\tuploadpack = touch /tmp/pwn;\\n'"
)

WRITTEN_THEN_RUN = [
    # tsc: from the manual
    'printf \'{"compilerOptions":{"outDir":"/tmp/o"}}\' > tsconfig.json && tsc',
    'printf \'{"compilerOptions":{"outDir":"/tmp/o"}}\' | tee tsconfig.json && tsc',
    'printf \'{"compilerOptions":{"declaration":true,"declarationDir":"/tmp/d"}}\' '
    "> tsconfig.json; tsc",
    # git: the folder it runs in as a bare repository (sandbox, no `.git` in the workspace)
    BARE + UPLOADPACK + " > config && git fetch x",
    BARE + UPLOADPACK + " > ./config && git --no-pager fetch x",
    BARE + UPLOADPACK + " | tee config && git fetch x",
    BARE + UPLOADPACK + " > config; sh -c 'git fetch x'",
    "printf 'ref: refs/heads/m\\n' > HEAD && git fetch x",  # objects/, refs/, config there
    # a configuration copied into a folder (ruff: sandbox)
    "cp kit/ruff.toml src/ && ruff check -q src",
    "cp kit/ruff.toml src && ruff check -q src",
    "cp -t src kit/ruff.toml && ruff check -q src",
    "cp -r kit/. src/ && ruff check -q src",
    "cp kit/pyproject.toml src/ && black --check src",
    "cp kit/tsconfig.json web/ && cd web && tsc",
]


@pytest.mark.parametrize("shell", ["bash", "sh", "zsh"])
@pytest.mark.parametrize("script", WRITTEN_THEN_RUN)
def test_a_program_after_the_script_writes_its_configuration_is_not_allowed(script, shell):
    assert _verdict("benign", script, shell) is not Verdict.ALWAYS


@pytest.mark.parametrize(
    "script",
    [
        "cp kit/CLAUDE.md src/",  # Claude Code reads it as the agent reaches src (F152)
        "cp kit/CLAUDE.md src",
        "cp -t src kit/CLAUDE.md",
        "cp kit/config.toml .cargo/",  # cargo's rustc-wrapper, runner
        "cp kit/config .bundle/",
    ],
)
def test_a_configuration_path_copied_into_a_folder_needs_its_rule(script):
    # as `cp kit/CLAUDE.md src/CLAUDE.md` does
    assert _verdict("benign", script) is not Verdict.ALWAYS


@pytest.mark.parametrize(
    "script",
    [
        "tsc",
        "tsc --noEmit",
        "printf 'export const a = 1\\n' > src/a.ts && tsc --noEmit",
        "git status",
        "printf 'x\\n' > notes.txt && git status",
        "printf 'x\\n' > src/config && git diff",  # not the folder git runs in
        "printf 'x\\n' > src/config && git add src/config && git commit -m config",
        "cp src/app.py src/b.py && ruff check src",
        "cp src/app.py build/ && ruff check src",
        "cp README.md docs/",
        "cp -r src build/ && ls build",
        "mkdir -p build && cp -t build src/app.py notes.txt",
    ],
)
def test_look_alikes_stay_allowed(script):
    assert _verdict("benign", script) is Verdict.ALWAYS


@pytest.mark.parametrize(
    ("rule", "script"),
    [
        ("git checkout *", "git checkout feature && git status"),
        ("git stash pop", "git stash pop && git diff"),
        ("git pull", "git pull && git log -1"),
        ("git merge *", "git merge main && git log --oneline -3"),
    ],
)
def test_git_after_git_lands_a_commit_stays_allowed_under_a_rule_that_names_it(rule, script):
    # What lands, lands in a repository: its `.git` is found before any folder is taken for a
    # bare one. A rule that names the landing command trusts what the commit holds (F152).
    named = benign_policy_with(rule)
    verdict = named.evaluate("run_command", {"command": script}, kinds()["run_command"]).verdict
    assert verdict is Verdict.ALWAYS
