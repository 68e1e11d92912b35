"""Shapes from the shell-rules review of stop 52 (FINDINGS F156).

A test runner beside a write was a concern unless the write was a log (`pytest | tee
pytest.log`), which no program runs as code. pytest's `--doctest-glob` runs the examples of
any text file its pattern matches, a `.log` too: `pytest --doctest-glob=t.log & echo '>>>
CODE' > t.log` ran CODE in bash, dash and zsh, and was ALWAYS.
"""

import pytest

from governance.policy import Verdict
from tests.shell_corpus.policies import shell_verdict as _verdict

_EXAMPLE = ">>> import os; os.system('rm -rf victim')"

# Each ran the example in the sandbox (the oracle runs of F156) and was ALWAYS.
DOCTEST_BESIDE_A_LOG = [
    ("review", f'python -m pytest -q --doctest-glob=t.log & echo "{_EXAMPLE}" > t.log'),
    ("review", f'python -m pytest -q --doctest-glob=t.log | echo "{_EXAMPLE}" > t.log'),
    ("review", f'python -m pytest -q --doctest-glob t.log & echo "{_EXAMPLE}" > t.log'),
    ("benign", f'sleep 1 && python3 -m pytest -q --doctest-glob=t.log & echo "{_EXAMPLE}" > t.log'),
]


@pytest.mark.parametrize("shell", ["bash", "sh", "zsh"])
@pytest.mark.parametrize(("policy", "script"), DOCTEST_BESIDE_A_LOG)
def test_doctests_of_a_log_being_written_are_not_allowed(policy, script, shell):
    assert _verdict(policy, script, shell) is not Verdict.ALWAYS


@pytest.mark.parametrize(
    "script",
    [
        "python -m pytest -q --doctest-glob='*.md'",
        "python -m pytest -q --doctest-glob README.md tests",
        "pytest --doctest-g=t.log",  # argparse's abbreviation
        "sh -c 'python -m pytest -q --doctest-glob=t.log'",
    ],
)
def test_doctest_glob_is_an_acting_option(script):
    # Whichever file it matches runs as code, a download or a log as much as a test.
    assert _verdict("benign", script) is Verdict.ASK


@pytest.mark.parametrize(
    "script",
    [
        "python -m pytest -q",
        "python -m pytest -q 2>&1 | tee pytest.log",
        "python -m pytest -q --doctest-modules src",
    ],
)
def test_a_runner_beside_its_own_log_stays_allowed(script):
    assert _verdict("benign", script) is Verdict.ALWAYS
