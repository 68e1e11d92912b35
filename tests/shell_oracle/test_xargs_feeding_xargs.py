"""xargs feeding xargs (FINDINGS F153).

`xargs` appends the words of its input to its command; when that command is `xargs` itself,
the words are the inner xargs' own, and its program among them: `echo rm -rf victim | xargs
xargs` ran `rm -rf victim`. The engine asks the rule that allows `xargs` to name the program
xargs runs with input words, and `run_command:xargs *` names xargs: it was ALWAYS under the
benign and builtins rules (a mutation fuzzer seeded from the benign corpus, 126,403 scripts,
found it). Each shape runs in the sandbox, acts, and is not ALWAYS.
"""

import pytest

from governance.policy import Verdict
from tests.shell_corpus.policies import benign_policy, builtins_policy
from tests.shell_oracle.oracle import Oracle

SHAPES = [
    "echo rm -rf victim | xargs xargs",
    "echo rm -rf victim | env xargs xargs",
    'echo rm -rf victim | sh -c "xargs xargs"',
    "printf 'rm -rf victim' > a.txt && xargs -a a.txt xargs",
    "xargs xargs <<'EOF'\nrm -rf victim\nEOF\n",
]


@pytest.mark.parametrize("shell", ["bash", "sh", "zsh"])
@pytest.mark.parametrize("script", SHAPES)
def test_xargs_feeding_xargs_is_not_allowed_by_a_rule_for_xargs(script, shell):
    for policy in (benign_policy(), builtins_policy()):
        assert Oracle(policy).evaluate(script, shell).verdict is not Verdict.ALWAYS


@pytest.mark.usefixtures("sandbox")
def test_each_shape_runs_what_its_input_names_in_the_sandbox():
    judged = Oracle(benign_policy()).judge([(s, "bash") for s in SHAPES], run_all=True)

    for judgement in judged:
        assert judgement.evaluation.verdict is not Verdict.ALWAYS, judgement.report()
        deleted = [
            w.path for w in judgement.observation.writes if w.path.startswith("/workspace/victim")
        ]
        assert deleted, judgement.report()
