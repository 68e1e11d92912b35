"""Formatters rewrite their operands in place: `black *` is not a licence to write outside
the workspace. Read from the programs' manuals (none of them is in the oracle's sandbox):
black, isort and `ruff format` rewrite the files given, and every file under a folder
given (`ruff format` with none: the working directory); their check and diff modes write
nothing."""

import pytest

from governance.policy import Verdict
from tests.governance.policy.test_review_shell_2 import verdict

REFUSED = [
    "black /etc/x.py",
    "black -q /etc",
    "black --line-length=100 /etc/x.py",
    "black -l 100 ../elsewhere",
    "black -- --check /etc/x.py",  # after `--`, a file named --check
    "python -m black /etc/x.py",
    "isort /etc/x.py",
    "isort --profile black /etc",
    "python3 -m isort ..",
    "ruff format /etc/x.py",
    "ruff format --line-length 100 /etc",
    "cd /etc && ruff format",
    "cd /etc && black .",
]

# black's and ruff's check and diff modes on a file outside load the configuration beside it
# (its cache folder written), and isort's diff writes `F.isorted` there: test_review_shell_16.
ALLOWED = [
    "black .",
    "black src/ tests/",
    "black a.py",
    "black -l 100 src",
    "python -m black --check .",
    "isort .",
    "isort --check-only /etc/x.py",
    "isort --stdout /etc/x.py",
    "ruff format",
    "ruff format src tests",
    "ruff check .",
]


@pytest.mark.parametrize("command", REFUSED)
def test_a_formatter_given_a_path_outside_the_workspace_writes_there(command):
    assert verdict(command) is not Verdict.ALWAYS


@pytest.mark.parametrize("command", ALLOWED)
def test_formatting_the_workspace_or_only_checking_stays_allowed(command):
    assert verdict(command) is Verdict.ALWAYS
