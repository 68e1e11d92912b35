"""Generated scripts with structure through the oracle, in bash, dash and zsh.

Scripts from the second grammar (tests/shell_oracle/structures.py: compound commands,
folders moved, made and linked, variables), drawn from a fixed seed so CI sees the same
ones every run, under the three policies whose programs it uses; those the engine allows
run in the sandbox, and any effect the rules do not allow is a disagreement. The long run is
`bench/shell_oracle_fuzz.py --grammar structured` (10^5 scripts per policy).
"""

import pytest

from tests.shell_corpus import policies
from tests.shell_oracle.generator import seeded_draws
from tests.shell_oracle.oracle import Oracle
from tests.shell_oracle.structures import structured_cases

pytestmark = pytest.mark.usefixtures("sandbox")
EXAMPLES = 1000


@pytest.mark.parametrize("policy", ["benign", "builtins", "links"])
def test_structured_scripts_the_engine_allows_do_only_what_the_rules_allow(policy, capsys):
    scripts = seeded_draws(structured_cases(policy=policy), EXAMPLES, seeded=1)

    judgements = Oracle(getattr(policies, f"{policy}_policy")()).judge(scripts, timeout=5.0)

    allowed = [j for j in judgements if j.allowed]
    disagreements = [j.report() for j in judgements if j.disagreements]
    with capsys.disabled():
        print(f"\nstructured ({policy}): {len(scripts)} scripts, {len(allowed)} allowed and run")
    assert {shell for _, shell in scripts} == {"bash", "sh", "zsh"}
    assert {j.shell for j in allowed} == {"bash", "sh", "zsh"}
    assert any("cd " in j.script and ";" in j.script for j in allowed), "folder moves run"
    assert len(allowed) >= 20, "the grammar must reach the engine's ALWAYS often"
    assert not disagreements, "\n\n".join(disagreements)
