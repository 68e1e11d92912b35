"""The rule engine: parse, compile, match (shell- and path-aware), lint, test, replay.

Pure Python, no Django. The Django side stores documents and feeds calls in.
"""

from governance.policy.compiled import (
    CompiledPolicy,
    Evaluation,
    MatchedRule,
    Segment,
    compile_policy,
)
from governance.policy.document import PolicyDocument, PolicyError, PolicyTest, Rule
from governance.policy.globs import MAX_PATTERN_BYTES, escape_pattern
from governance.policy.invisible import escape_invisible
from governance.policy.lint import LintWarning, lint
from governance.policy.paths import normalise_path
from governance.policy.policy_tests import TestFailure, run_tests
from governance.policy.replay import Change, RecordedCall, replay
from governance.policy.subjects import MAX_SUBJECT_BYTES, MatchArgument, call_key
from governance.policy.verdicts import Verdict

__all__ = [
    "MAX_PATTERN_BYTES",
    "MAX_SUBJECT_BYTES",
    "Change",
    "CompiledPolicy",
    "Evaluation",
    "LintWarning",
    "MatchArgument",
    "MatchedRule",
    "PolicyDocument",
    "PolicyError",
    "PolicyTest",
    "RecordedCall",
    "Rule",
    "Segment",
    "TestFailure",
    "Verdict",
    "call_key",
    "compile_policy",
    "escape_invisible",
    "escape_pattern",
    "lint",
    "normalise_path",
    "replay",
    "run_tests",
]
