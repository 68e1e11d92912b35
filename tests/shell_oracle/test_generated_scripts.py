"""Generated scripts through the oracle, in bash and dash.

A few hundred scripts from the grammar (tests/shell_oracle/generator.py), derandomized
so CI sees the same ones every run; those the engine allows under the review's policy
run in the sandbox, and any effect the rules do not allow is a disagreement. The long
run is bench/shell_oracle_fuzz.py (10^5 scripts).
"""

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from tests.shell_corpus.policies import review_policy
from tests.shell_oracle.generator import cases
from tests.shell_oracle.oracle import Oracle

pytestmark = pytest.mark.usefixtures("sandbox")
EXAMPLES = 400


def _generated(count: int) -> list[tuple[str, str]]:
    drawn: list[tuple[str, str]] = []

    # Hypothesis draws the cases; the sandbox then runs them in one batch, not one by one.
    @settings(
        max_examples=count,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(cases(("bash", "sh")))
    def draw(case):
        drawn.append(case)

    draw()
    return list(dict.fromkeys(drawn))


def test_generated_scripts_the_engine_allows_do_only_what_the_rules_allow(capsys):
    scripts = _generated(EXAMPLES)

    judgements = Oracle(review_policy()).judge(scripts, timeout=5.0)

    allowed = [j for j in judgements if j.allowed]
    disagreements = [j.report() for j in judgements if j.disagreements]
    with capsys.disabled():
        print(f"\ngenerated: {len(scripts)} scripts, {len(allowed)} allowed and run")
    assert {shell for _, shell in scripts} == {"bash", "sh"}
    assert len(allowed) >= 40, "the generator must reach the engine's ALWAYS often"
    assert not disagreements, "\n\n".join(disagreements)
