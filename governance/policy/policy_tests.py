"""Running a policy's own `tests:` (a version whose tests fail is not saved)."""

from collections.abc import Mapping
from dataclasses import dataclass

from governance.policy.compiled import compile_policy
from governance.policy.document import PolicyDocument
from governance.policy.subjects import MatchArgument, SubjectError, call_key
from governance.policy.verdicts import Verdict


@dataclass(frozen=True)
class TestFailure:
    """A test whose verdict differs from the one it expects."""

    __test__ = False

    call: str
    expected: Verdict
    got: Verdict
    error: str | None = None


def run_tests(
    document: PolicyDocument, kinds: Mapping[str, MatchArgument | None] | None = None
) -> list[TestFailure]:
    kinds = kinds or {}
    compiled = compile_policy(document)
    failures = []
    for test in document.tests:
        if test.call is not None:
            label = test.call
            evaluation = compiled.evaluate_key(test.call, kinds)
        else:
            match_argument = kinds.get(test.tool)
            evaluation = compiled.evaluate(test.tool, test.arguments, match_argument)
            try:
                label = call_key(test.tool, test.arguments, match_argument)
            except SubjectError:
                label = f"{test.tool} {dict(test.arguments or {})}"
        if evaluation.verdict is not test.expect:
            failures.append(TestFailure(label, test.expect, evaluation.verdict, evaluation.error))
    return failures
