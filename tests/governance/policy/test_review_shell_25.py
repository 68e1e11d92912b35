"""Shapes from a shell-rules review of stop 54 (FINDINGS F160): a linter's configuration,
written by the script itself, moves where the linter writes.

ruff reads `cache-dir` from the project's `ruff.toml`, `.ruff.toml` or `pyproject.toml`
(`[tool.ruff]`) and writes its cache there, wherever that is. ruff runs no project code, so
a write before it was no concern: `printf 'cache-dir = "/etc/rc"\\n' > ruff.toml && ruff
check -q .` was ALWAYS under the benign rules (`printf *`, `ruff *`, writes under
/workspace), and in the sandbox (bash; ruff 0.17.5 on PATH beside the system's programs)
ruff made `/etc/rc` (EROFS) and, with `/tmp/rc`, wrote `/tmp/rc/CACHEDIR.TAG`,
`/tmp/rc/.gitignore` and its cache files there: `write_file:*` outside /workspace is NEVER.
black's `[tool.black]` table takes its command-line options (what it formats among them):
held alike, not run here.

`ruff clean` empties the cache folder that configuration names, wherever it is: with
`cache-dir` pointing at a folder outside, a file in it was gone (run on this machine in a
scratch folder). The configuration may come from an earlier call or from the repository, so
`ruff clean` needs a rule that names it; `ruff *` is not one.

Now a script that writes what may be such a configuration (the file by name, a folder's
files, a glob's, a commit's files landed by git) and then runs ruff or black asks. The
formatters' own rewrites are Python sources, not their configuration.
"""

import pytest

from governance.policy import Verdict
from tests.shell_corpus.policies import benign_policy_with, kinds
from tests.shell_corpus.policies import shell_verdict as _verdict

# Each was ALWAYS under the benign rules; the ruff ones wrote outside the workspace in the
# sandbox (bash).
CONFIGURATION_THEN_LINT = [
    "printf 'cache-dir = \"/etc/rc\"\\n' > ruff.toml && ruff check -q .",
    "printf 'cache-dir = \"/tmp/rc\"\\n' > ruff.toml && ruff check -q .",
    "printf '[tool.ruff]\\ncache-dir = \"/etc/rc\"\\n' > pyproject.toml && ruff check -q .",
    "printf 'cache-dir = \"/etc/rc\"\\n' > .ruff.toml && ruff format --check .",
    "printf 'cache-dir = \"/etc/rc\"\\n' | tee ruff.toml && ruff check -q .",
    "printf 'cache-dir = \"/etc/rc\"\\n' > ruff.toml && env ruff check -q .",
    "printf 'cache-dir = \"/etc/rc\"\\n' > ruff.toml; sh -c 'ruff check -q .'",
    # black: its `[tool.black]` table takes its command-line options; not run here
    "printf '[tool.black]\\ncache-dir = \"/etc/bc\"\\n' > pyproject.toml && black --check .",
]


@pytest.mark.parametrize("shell", ["bash", "sh", "zsh"])
@pytest.mark.parametrize("script", CONFIGURATION_THEN_LINT)
def test_a_linter_after_the_script_writes_its_configuration_is_not_allowed(script, shell):
    assert _verdict("benign", script, shell) is not Verdict.ALWAYS


@pytest.mark.parametrize(
    "script",
    [
        "ruff check -q .",
        "ruff check . && ruff format --check .",
        "ruff check src --select E,F",
        "black --check . && ruff check .",
        "black . && ruff check .",  # black rewrites Python sources, not ruff.toml
        "ruff check . && black --check .",
        "printf 'x = 1\\n' > src/a.py && ruff check .",  # a source, not a configuration
        "echo x > notes.txt; ruff check .",
        "mkdir -p build && ruff check .",
        "cd src && ruff check .",
    ],
)
def test_linting_without_writing_its_configuration_stays_allowed(script):
    assert _verdict("benign", script) is Verdict.ALWAYS


@pytest.mark.parametrize(
    "script", ["ruff clean", "ruff clean -n", "env ruff clean", "python -m ruff clean"]
)
def test_ruff_clean_needs_a_rule_that_names_it(script):
    # the configuration written by an earlier call: each call alone looks harmless
    assert _verdict("benign", "printf 'cache-dir = \"/home\"\\n' > ruff.toml") is Verdict.ALWAYS
    assert _verdict("benign", script) is not Verdict.ALWAYS
    named = benign_policy_with("ruff clean")
    assert (
        named.evaluate("run_command", {"command": "ruff clean"}, kinds()["run_command"]).verdict
        is Verdict.ALWAYS
    )
