"""The attack corpus, proven in real shells and held against the engine.

Each attack runs in its shell inside the sandbox: its effect must really happen, and
it must do something the rules, applied literally, do not allow (else it is no attack
under that policy). Then the engine must not say ALWAYS for it: an ALWAYS here is an
oracle disagreement, printed with what the shell did.
"""

from collections import Counter

import pytest

from governance.policy import Verdict
from tests.shell_corpus.attacks import ATTACKS, Attack
from tests.shell_corpus.policies import (
    benign_policy,
    builtins_policy,
    links_policy,
    review_policy,
)
from tests.shell_oracle.oracle import Oracle, shows
from tests.shell_oracle.sandbox import Job, run_jobs

pytestmark = pytest.mark.long

ORACLES = {
    "review": Oracle(review_policy()),
    "benign": Oracle(benign_policy()),
    "builtins": Oracle(builtins_policy()),
    "links": Oracle(links_policy()),
}
IDS = [f"{index}-{attack.klass}" for index, attack in enumerate(ATTACKS)]
# Every class of the review's table, and the acting options and compositions it found.
CLASSES = {
    "quotes in ${x:-…}": 30,
    "$'…' in ${…}": 10,
    "backslash-newline": 20,
    "here-document in $( or <(": 20,
    "for without in": 10,
    "arithmetic evaluation": 20,
    "rebinding names": 20,
    "shell stdin": 20,
    "start-up files": 15,
    "fd redirections": 20,
    "NUL byte": 10,
    "dialects": 20,
    "reads through redirections": 20,
    "acting options": 40,
    "compositions": 15,
    "links": 15,
}


def _key(attack: Attack) -> tuple[str, str, bool]:
    return (attack.script, attack.shell, attack.stdin)


def _timeout(script: str) -> float:
    # Maven starts a JVM, which under strace on two busy cores took more than 10 s in CI
    # before it wrote anything.
    return 90.0 if "mvn " in script else 10.0


@pytest.fixture(scope="module")
def observed(sandbox):
    keys = list(dict.fromkeys(_key(attack) for attack in ATTACKS))
    jobs = [Job(script, shell, _timeout(script), stdin) for script, shell, stdin in keys]
    return dict(zip(keys, run_jobs(jobs), strict=True))


def test_the_corpus_has_every_class_with_many_shapes():
    counts = Counter(attack.klass for attack in ATTACKS)

    assert len(ATTACKS) >= 250
    assert len({attack.id for attack in ATTACKS}) == len(ATTACKS)
    for klass, least in CLASSES.items():
        assert counts[klass] >= least, (klass, counts[klass])
    assert {attack.shell for attack in ATTACKS} == {"bash", "sh", "zsh"}


@pytest.mark.parametrize("attack", ATTACKS, ids=IDS)
def test_the_engine_never_allows_an_attack(attack):
    evaluation = ORACLES[attack.policy].evaluate(attack.script, attack.shell)

    assert evaluation.verdict is not Verdict.ALWAYS, (attack.script, evaluation.segments)


@pytest.mark.parametrize("attack", ATTACKS, ids=IDS)
def test_each_attack_does_in_a_real_shell_what_the_corpus_says(attack, observed):
    observation = observed[_key(attack)]
    oracle = ORACLES[attack.policy]

    assert shows(observation, attack.effect.kind, attack.effect.subject), (
        f"{attack.effect} did not happen: {observation.summary()} {observation.stderr[:500]}"
    )
    unallowed = oracle.unallowed(observation)
    assert unallowed, f"nothing the rules forbid happened: {observation.summary()}"
    if oracle.evaluate(attack.script, attack.shell).verdict is Verdict.ALWAYS:
        pytest.fail(f"disagreement: the engine allowed it, and {[str(d) for d in unallowed]}")
