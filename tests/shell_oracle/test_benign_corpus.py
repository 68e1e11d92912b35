"""The benign corpus in the real shell: what the engine allows must do only what the rules allow.

Every command of tests/shell_corpus/benign.py that the engine allows under the benign
policy runs in bash in the sandbox; an effect the rules, applied literally, do not allow
is a disagreement. The commands it does not allow although everything they did was
allowed are printed: information (the cost in benign commands), not a failure.
"""

import pytest

from tests.shell_corpus.benign import BENIGN
from tests.shell_corpus.policies import benign_policy
from tests.shell_oracle.oracle import Oracle

pytestmark = [pytest.mark.usefixtures("sandbox"), pytest.mark.long]


def test_what_the_engine_allows_of_the_benign_corpus_does_only_what_the_rules_allow(capsys):
    commands = [(entry.command, "bash") for entry in BENIGN]
    judgements = Oracle(benign_policy()).judge(commands, timeout=5.0)

    disagreements = [j.report() for j in judgements if j.disagreements]
    refused = [j.script for j in judgements if not j.allowed]
    with capsys.disabled():
        print(f"\nbenign corpus: {len(judgements) - len(refused)} of {len(judgements)} allowed")
        for script in refused:
            print(f"  not allowed: {script!r}")
    assert not disagreements, "\n\n".join(disagreements)
