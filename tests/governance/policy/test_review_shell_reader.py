"""The tolerant reader reads the compound commands it once stopped at, and an autonomous run's
fallback `allow` is never given to a call its policy could not read in full.

The shapes are proven in real bash by tests/shell_corpus/attacks.py ("compound commands"):
each ran `rm -rf /workspace/victim`. Before, `case`, `[[ ]]`, `(( ))`, `for ((...))` and
`coproc` stopped the reader with an error, so a NEVER rule for `rm` never saw the command:
ASK, which an autonomous run whose policy falls back to `allow` allowed.
"""

import pytest

from governance.policy import Verdict
from governance.services.policies import policy_save
from ledger.models import Event
from tests.conftest import TEST_POLICY
from tests.governance.gate.test_pipeline import ask
from tests.shell_corpus.policies import kinds, review_policy

FALLBACK_ALLOW = TEST_POLICY.replace("autonomous_fallback: deny", "autonomous_fallback: allow")

HIDDEN_RM = [
    "case x in *) rm -rf /;; esac",
    "case x in\n  (a|b) echo a ;;\n  x) rm -rf / ;;\nesac",
    "case x in a) echo a;; esac; rm -rf /",
    "case x in a) case y in b) echo;; esac;; *) rm -rf /;; esac",
    "case $(rm -rf /) in *) ;; esac",
    "case x in $(rm -rf /)) ;; esac",
    "case x in x) cat <<E ;;\n$(rm -rf /)\nE\nesac",
    "x=$(case a in a) rm -rf /;; esac)",
    "[[ $(rm -rf /) ]]",
    "[[ -f <(rm -rf /) ]]",
    "[[ x =~ ^(x|y)$ ]] && rm -rf /",
    "if [[ -n x ]]; then rm -rf /; fi",
    "[[ a < b ]]; rm -rf /",
    "(( $(rm -rf /) ))",
    '(( "$(rm -rf /)" ))',
    "((x = 1)); rm -rf /",
    "(( '1' )); rm -rf /",
    "for ((i = 0; i < 1; i++)); do rm -rf /; done",
    "coproc rm -rf /",
    "coproc X { rm -rf /; }",
    "coproc X (rm -rf /)",
    "((echo a); rm -rf /)",  # not arithmetic: a subshell in a subshell, as bash reads it
    '(( "$((( "$(rm -rf /)" )))" ))',
    "[[ -n x && $(((x++)) ; rm -rf /) ]]",
]
# Past the tolerant reader's ceiling of 2,000 steps, the rest of a script is not read.
PADDED_RM = "echo " + "$x " * 1500 + "; rm -rf /"

UNREADABLE = [
    "case x in",  # no esac
    "case x in a) echo;; esac; case y in b) rm -rf /",  # no esac, the rm seen all the same
    "[[ -n x\n]]",  # a newline inside [[ ]]: bash's syntax error
    "]] x",
    PADDED_RM,
]


def review_verdict(command: str):
    return review_policy().evaluate(
        "run_command", {"command": command}, kinds("bash")["run_command"]
    )


@pytest.mark.parametrize("command", HIDDEN_RM)
def test_a_never_rule_sees_a_command_inside_a_compound_command(command):
    evaluation = review_verdict(command)

    assert evaluation.verdict is Verdict.NEVER, (evaluation.error, evaluation.segments)


@pytest.mark.parametrize(
    "command",
    [
        "case $1 in -h) echo usage;; *) ls;; esac",
        "[[ -f README.md ]] && echo yes",
        "[[ $x =~ ^(a|b)$ ]] || echo no",
        "for ((i = 0; i < 3; i++)); do echo $i; done",
        "(( n > 1 )) && echo many",
    ],
)
def test_the_same_constructs_without_a_forbidden_command_stay_asked(command):
    evaluation = review_verdict(command)

    assert evaluation.verdict is Verdict.ASK and evaluation.error is None, evaluation.error


@pytest.mark.parametrize("command", UNREADABLE)
def test_what_the_reader_cannot_finish_is_an_error_never_always(command):
    evaluation = review_verdict(command)

    assert evaluation.verdict is not Verdict.ALWAYS
    assert evaluation.error or evaluation.verdict is Verdict.NEVER


@pytest.mark.django_db
def test_an_autonomous_fallback_allow_is_not_given_to_a_script_the_policy_could_not_read(
    org, make_run
):
    """Attack: hide `rm` past where the reader stops (a script padded past its ceiling) in an
    autonomous run whose policy falls back to `allow`: the call was ASK, then allowed."""
    policy_save(org=org, text=FALLBACK_ALLOW, author=None)
    run_id, runner = make_run(autonomy="autonomous")

    hidden = ask(runner, run_id, "run_command", {"command": PADDED_RM})
    case = ask(
        runner, run_id, "run_command", {"command": "case x in *) rm -rf /;; esac"}, call_id="c-2"
    )
    read = ask(runner, run_id, "run_command", {"command": "echo $(date)"}, call_id="c-3")

    assert (hidden["decision"], hidden["source"]) == ("deny", "approval")
    assert "could not read in full" in hidden["reason"]
    assert (case["decision"], case["source"]) == ("deny", "policy")
    # A script read in full, outside the subset: the fallback the admin chose.
    assert (read["decision"], read["source"]) == ("allow", "approval")
    decisions = {
        event.data["tool_call_id"]: event.data
        for event in Event.objects.filter(run_id=run_id, type="tool.decision")
    }
    assert decisions["c-1"]["verdict"] == "deny"
    assert decisions["c-1"]["fail_closed"] == "policy_error"
    assert decisions["c-1"]["original_verdict"] == "require_approval"
    assert "fail_closed" not in decisions["c-3"]
