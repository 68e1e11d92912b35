"""The rules bench/shell_vs_agents.py gives Codex and Claude Code are the corpora's rules.

The bench compares fluidbox with Codex's execpolicy and Claude Code's permission rules
under "the same rules"; the translations it uses are committed in bench/shell_vs_agents/.
If tests/shell_corpus/policies.py changes and the committed translations do not, the
comparison would silently be between different policies.
"""

import json
import re
import shlex
from pathlib import Path

import pytest

from tests.shell_corpus.agent_rules import POLICIES, shell_prefix, translations
from tests.shell_corpus.policies import ALWAYS

COMMITTED = Path(__file__).resolve().parents[3] / "bench" / "shell_vs_agents"
PREFIX_RULE = re.compile(r'^prefix_rule\(pattern = (\[.*\]), decision = "(allow|forbidden)"\)$')


def test_the_committed_translations_are_what_the_policies_translate_to():
    expected = translations()

    assert sorted(p.name for p in COMMITTED.iterdir()) == sorted(expected)
    for name, text in expected.items():
        assert (COMMITTED / name).read_text() == text, (
            f"{name} is stale: run bench/shell_vs_agents.py --write-rules"
        )


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_every_shell_rule_has_its_counterpart_with_the_same_decision(policy):
    codex: dict[tuple[str, ...], str] = {}
    for line in (COMMITTED / f"codex-{policy}.rules").read_text().splitlines():
        if line.startswith("#"):
            continue
        words, decision = PREFIX_RULE.match(line).groups()
        codex[tuple(json.loads(words))] = decision
    claude = json.loads((COMMITTED / f"claude-{policy}.settings.json").read_text())
    permissions = claude["permissions"]

    assert permissions["defaultMode"] == "dontAsk"
    shell_rules = [(p, a) for p, a in POLICIES[policy] if p.startswith("run_command:")]
    for pattern, action in shell_rules:
        prefix, _ = shell_prefix(pattern)
        allowed = action == ALWAYS
        assert codex[tuple(shlex.split(prefix))] == ("allow" if allowed else "forbidden")
        rest = pattern.partition(":")[2]
        assert f"Bash({rest})" in permissions["allow" if allowed else "deny"]
        assert f"Bash({rest})" not in permissions["deny" if allowed else "allow"]
    # Nothing more is allowed than the policy says: one Bash rule per shell rule, one Codex
    # rule per distinct prefix.
    bash_rules = [r for r in permissions["allow"] + permissions["deny"] if r.startswith("Bash(")]
    assert len(bash_rules) == len(shell_rules)
    assert len(codex) == len({tuple(shlex.split(shell_prefix(p)[0])) for p, _ in shell_rules})
