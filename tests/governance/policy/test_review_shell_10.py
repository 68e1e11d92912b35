"""Shapes from the twelfth shell-rules review (FINDINGS F113-): options of allowed programs
that write where their input says; read by the engine alone.

mikefarah's yq writes each result to a file named by an expression with `-s`/`--split-exp`
(F113, from its manual): the document chooses the file names, so no path the engine can read
is written, and the option needs a rule that names it. Debian's yq (the jq wrapper) takes
`-s` for jq's `--slurp`; the engine cannot tell the two apart, so `-s` is acting for both,
as `-i` was.
"""

import pytest

from governance.policy import Verdict
from tests.shell_corpus.policies import benign_policy, kinds


def verdict(command: str) -> Verdict:
    arguments = {"command": command}
    return benign_policy().evaluate("run_command", arguments, kinds()["run_command"]).verdict


NOT_ALLOWED = [
    # F113: yq writes a file per result, named by an expression
    "yq -s '\"/etc/\" + .name' x.yml",
    "yq --split-exp '.name' x.yml",
    "yq --split-exp='.name' x.yml",
    "yq -Ps .name x.yml",
    "yq eval -s .name x.yml",
    "yq ea -s .name x.yml",
    "yq --split-exp-file=names.txt x.yml",
    "yq --split-exp-file names.txt x.yml",
]


@pytest.mark.parametrize("command", NOT_ALLOWED)
def test_options_that_write_where_the_input_says_need_a_rule_that_names_them(command):
    assert verdict(command) is not Verdict.ALWAYS


ALLOWED = [
    "yq .name x.yml",
    "yq -P .name x.yml",
    "yq -o json . x.yml",
    "yq eval '.a.b' x.yml",
    "yq -r .name x.yml",
]


@pytest.mark.parametrize("command", ALLOWED)
def test_what_agents_run_stays_allowed(command):
    assert verdict(command) is Verdict.ALWAYS
