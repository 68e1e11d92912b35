"""The tolerant reader reads the compound commands it once stopped at (FINDINGS F93-F94).

The shapes are proven in real bash by tests/shell_corpus/attacks.py ("compound commands"):
each ran `rm -rf /workspace/victim`. Before, `case`, `[[ ]]`, `(( ))`, `for ((...))` and
`coproc` stopped the reader with an error, so a NEVER rule for `rm` never saw the command:
ASK, which an autonomous run whose policy falls back to `allow` allowed (SPEC §2: a failure
in matching is the fallback there).
"""

import pytest

from governance.policy import Verdict
from governance.services.policies import policy_save
from ledger.models import Event
from tests.conftest import TEST_POLICY
from tests.governance.gate.test_pipeline import ask
from tests.governance.policy.test_review_shell_2 import verdict as benign_verdict
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


ZSH_HIDDEN_RM = [
    "repeat 2 rm -rf /",
    "repeat 2 { rm -rf / }",
    "foreach x (a) rm -rf /; end",
    "for x (a b) rm -rf /",
    "{ echo } always { rm -rf / }",
    "while (( 1 )) { rm -rf /; break }",
    "noglob rm -rf /",
    "nocorrect rm -rf /",
    "echo =(rm -rf /)",
    "print -l /etc/host*(e:'rm -rf /':)",
    "ls *(.e:'echo a; rm -rf /':)",
    "ls *(e{a;rm -rf /})",
]


@pytest.mark.parametrize("command", ZSH_HIDDEN_RM)
def test_a_never_rule_sees_a_command_inside_zshs_own_syntax(command):
    evaluation = review_policy().evaluate(
        "run_command", {"command": command}, kinds("zsh")["run_command"]
    )

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
def test_an_autonomous_run_gives_what_the_reader_cannot_finish_its_fallback_and_says_why(
    org, make_run
):
    """SPEC §2: a failure in matching is ASK in a supervised run and the fallback in an
    autonomous one. A `case` is now read, so its `rm` is NEVER even under a fallback of
    `allow`; a script padded past the reader's ceiling is the fallback, and the ledger says
    why the rules did not decide it."""
    policy_save(org=org, text=FALLBACK_ALLOW, author=None)
    run_id, runner = make_run(autonomy="autonomous")
    supervised_id, supervised = make_run()

    case = ask(runner, run_id, "run_command", {"command": "case x in *) rm -rf /;; esac"})
    padded = ask(runner, run_id, "run_command", {"command": PADDED_RM}, call_id="c-2")
    asked = ask(supervised, supervised_id, "run_command", {"command": PADDED_RM})

    assert (case["decision"], case["source"]) == ("deny", "policy")
    assert (padded["decision"], padded["original_verdict"]) == ("allow", "require_approval")
    assert "longer than the 2000 steps read" in padded["reason"]
    assert asked["decision"] == "pending"
    decided = Event.objects.get(run_id=run_id, type="tool.decision", data__tool_call_id="c-2")
    assert "longer than the 2000 steps read" in decided.data["reason"]


# What the best-effort reading finds is resolved from the tool's working directory, so a
# relative write into the workspace is no longer matched as the bare word `y` by the
# catch-all `write_file:*` NEVER (a loop writing a project file was denied without asking).
# Only a NEVER rule counts there: a `cd` the reading missed can only turn a NEVER into ASK.
@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("for f in a b; do echo x > out.txt; done", Verdict.ASK),
        ("echo $X > notes/out.txt", Verdict.ASK),
        ("xargs -I{} cp {} backup.txt", Verdict.ASK),
        ("for f in a; do echo x > ../../etc/passwd; done", Verdict.NEVER),
        ("echo $X > /etc/passwd", Verdict.NEVER),
        ("echo $X > ~/.bashrc", Verdict.NEVER),
    ],
)
def test_the_best_effort_reading_resolves_relative_writes_from_the_working_directory(
    command, expected
):
    assert benign_verdict(command) is expected
