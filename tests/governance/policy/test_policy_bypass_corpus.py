"""An attacker's view: no shape of a dangerous call comes out ALWAYS under prefix-style rules."""

from pathlib import Path

import pytest
import yaml

from governance.policy import MatchArgument, PolicyDocument, Verdict, compile_policy

CORPUS = yaml.safe_load((Path(__file__).parent / "bypass_corpus.yaml").read_text("utf-8"))

POLICY = compile_policy(
    PolicyDocument.from_yaml(
        """
name: prefix-style
rules:
  - pattern: "run_command:rm *"
    action: NEVER
  - pattern: "run_command:ls *"
    action: ALWAYS
  - pattern: "run_command:ls"
    action: ALWAYS
  - pattern: "run_command:git status"
    action: ALWAYS
  - pattern: "run_command:echo *"
    action: ALWAYS
  - pattern: "write_file:/workspace/*"
    action: ALWAYS
  - pattern: "write_file:*"
    action: NEVER
"""
    )
)
KINDS = {
    "run_command": MatchArgument("command", "shell"),
    "write_file": MatchArgument("path", "path"),
}


def test_the_corpus_covers_every_family_with_enough_shapes():
    assert len(CORPUS) >= 150
    assert len({entry["shape"] for entry in CORPUS}) == len(CORPUS)
    assert {entry["expect"] for entry in CORPUS} == {"never", "not-always", "always"}


@pytest.mark.parametrize("entry", CORPUS, ids=[entry["shape"] for entry in CORPUS])
def test_shape(entry):
    evaluation = POLICY.evaluate_key(entry["call"], KINDS)

    if entry["expect"] == "never":
        assert evaluation.verdict is Verdict.NEVER, evaluation
    elif entry["expect"] == "not-always":
        assert evaluation.verdict is not Verdict.ALWAYS, evaluation
    else:
        assert evaluation.verdict is Verdict.ALWAYS, evaluation


@pytest.mark.parametrize(
    "command",
    ["/bin/rm -rf /", "ls; rm -rf /", "sh -c 'rm -rf /'", "ls && rm -rf /", "\\rm -rf /"],
)
def test_the_spec_examples_are_denied_by_the_rm_rule(command):
    evaluation = POLICY.evaluate("run_command", {"command": command}, KINDS["run_command"])

    assert evaluation.verdict is Verdict.NEVER
    assert evaluation.rule.index == 0
    assert "run_command:rm -rf /" in {s.subject for s in evaluation.segments if s.rule_index == 0}
