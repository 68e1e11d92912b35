"""Users' common commands stay ALWAYS: at least 95% of the benign corpus under the benign policy."""

import pytest

from governance.policy import Verdict
from tests.shell_corpus.benign import BENIGN, OUTSIDE
from tests.shell_corpus.policies import BENIGN_PROGRAMS, benign_policy, kinds

SHARE = 0.95


def evaluate(command: str, shell: str = "bash"):
    return benign_policy().evaluate(
        "run_command", {"command": command}, kinds(shell)["run_command"]
    )


def test_the_corpus_holds_at_least_300_distinct_commands_with_real_program_rules():
    commands = [entry.command for entry in BENIGN]

    assert len(set(commands)) == len(commands) >= 300
    unknown = {p for entry in BENIGN for p in entry.programs if p not in BENIGN_PROGRAMS}
    assert not unknown


@pytest.mark.parametrize("shell", ["bash", "sh", "zsh"])
def test_at_least_95_percent_of_the_benign_corpus_stays_always(shell, capsys):
    lost = [
        entry for entry in BENIGN if evaluate(entry.command, shell).verdict is not Verdict.ALWAYS
    ]

    kept = 1 - len(lost) / len(BENIGN)
    with capsys.disabled():
        kept_count = len(BENIGN) - len(lost)
        print(f"\n{shell}: {kept_count}/{len(BENIGN)} benign commands stay ALWAYS ({kept:.1%})")
        for entry in lost:
            reasons = {
                s.reason or f"no rule for {s.subject}"
                for s in evaluate(entry.command, shell).segments
                if s.verdict is not Verdict.ALWAYS
            }
            print(f"  {entry.command!r}: {'; '.join(sorted(reasons))[:160]}")
    assert kept >= SHARE


@pytest.mark.parametrize("entry", [e for e in BENIGN if e not in OUTSIDE], ids=lambda e: e.command)
def test_an_allowed_command_is_allowed_by_the_rules_of_its_programs(entry):
    evaluation = evaluate(entry.command)
    if evaluation.verdict is not Verdict.ALWAYS:
        pytest.skip("lost ALWAYS: listed by the share test")
    rules = {f"run_command:{p}" for p in entry.programs} | {
        f"run_command:{p} *" for p in entry.programs
    }
    used = {s.subject: evaluation_rule(s) for s in evaluation.segments if s.rule_index is not None}

    assert all(
        pattern in rules or pattern.startswith(("write_file:", "read_file:"))
        for pattern in used.values()
    ), used


def evaluation_rule(segment) -> str:
    return benign_policy().rules[segment.rule_index].pattern


@pytest.mark.parametrize("entry", OUTSIDE, ids=lambda e: e.command)
def test_shapes_outside_the_subset_lose_always_on_purpose(entry):
    assert evaluate(entry.command).verdict is not Verdict.ALWAYS
