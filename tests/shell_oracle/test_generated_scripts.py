"""Generated scripts through the oracle, in bash and dash.

A few hundred scripts from the grammar (tests/shell_oracle/generator.py), drawn from a
fixed seed so CI sees the same ones every run; those the engine allows under the review's
policy run in the sandbox, and any effect the rules do not allow is a disagreement. The
long run is bench/shell_oracle_fuzz.py (10^5 scripts).
"""

import pytest

from tests.shell_corpus.policies import review_policy
from tests.shell_oracle.generator import cases, seeded_draws
from tests.shell_oracle.oracle import Oracle

pytestmark = pytest.mark.usefixtures("sandbox")
EXAMPLES = 400


def test_generated_scripts_the_engine_allows_do_only_what_the_rules_allow(capsys):
    scripts = seeded_draws(cases(("bash", "sh")), EXAMPLES, seeded=1)

    judgements = Oracle(review_policy()).judge(scripts, timeout=5.0)

    allowed = [j for j in judgements if j.allowed]
    disagreements = [j.report() for j in judgements if j.disagreements]
    with capsys.disabled():
        print(f"\ngenerated: {len(scripts)} scripts, {len(allowed)} allowed and run")
    assert {shell for _, shell in scripts} == {"bash", "sh"}
    assert len(allowed) >= 40, "the generator must reach the engine's ALWAYS often"
    assert not disagreements, "\n\n".join(disagreements)
