"""A policy compiled once: first-match lookup through a prefix index, and evaluation.

Index: every pattern's literal prefix (the characters before its first `*`, `?` or
non-trivial `[...]`) is a string every matching key must start with. Rules are
bucketed by the tool name when the prefix contains the `:` (`run_command:git `),
otherwise in a shared index; within each, by prefix. A key only visits the
buckets of its own prefixes (one dictionary lookup per distinct prefix length),
and the candidates are tried in rule order, so the first match is exactly the
first match of a plain top-to-bottom loop. A candidate whose pattern contains a
literal run after its first star (`*--force*`) is skipped at the cost of one
substring test when the key lacks that run.

Evaluation combines every probe of a call (see subjects): the most restrictive
verdict wins (NEVER > ASK > ALWAYS), a binding probe no rule matches is ASK, and
every concern is ASK. Anything that goes wrong fails closed: ASK with an `error`,
never ALWAYS. A rule that matches exactly one string (no wildcards, as Approve &
Remember writes them) that matches the whole call key and allows it lifts an ASK
to ALWAYS: a human approved that exact call. It never lifts a NEVER or an error.
"""

import bisect
import itertools
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from governance.policy.acting_options import pattern_names
from governance.policy.disk_links import LINKS_ARGUMENT
from governance.policy.document import PolicyDocument, Rule, parse_rule
from governance.policy.globs import OPEN_STEP_BUDGET, CompiledGlob, GlobError
from governance.policy.subjects import (
    CallReading,
    MatchArgument,
    SubjectError,
    is_oversize,
    read_call,
)
from governance.policy.verdicts import Verdict
from governance.process_cache import ProcessCache

_RANK = {Verdict.ALWAYS: 0, Verdict.ASK: 1, Verdict.NEVER: 2}

# Keys the rules are looked up by repeat from call to call (`run_command:git status` in
# every other script): each process remembers the first match of short keys. A compiled
# policy never changes, so (policy, key) always has the same answer. Bounded by emptying
# it when full; a key longer than _MEMO_KEY_CHARS is not remembered.
# Both memories name a policy by a weak reference: a draft compiled for one replay, test
# run, lint or dry run (up to 10,000 rules, tens of MiB) must die with its request, not
# stay pinned by thousands of entries. A dead reference equals no other, so an entry of a
# dead policy is never served to a new one that happens to reuse its address.
_MEMO_SIZE = 8192
_MEMO_KEY_CHARS = 256
_first_matches: dict[tuple[weakref.ref, str], int | None] = {}

# A whole command text evaluated under one compiled policy, as a tool reads it: agents
# send the same `git status` again and again. Evaluations are immutable (frozen
# dataclasses, tuples), so one may be shared. Least recently used first out; only texts
# up to _REMEMBERED_CHARS read into at most _REMEMBERED_SEGMENTS segments, so each entry
# holds a few KiB at most and the whole cache well under 16 MiB per process.
_REMEMBERED = 512
_REMEMBERED_CHARS = 2048
_REMEMBERED_SEGMENTS = 64


def rule_number(index: int | None) -> int | None:
    """Rules are numbered as people count them, from 1, on every surface: gate reasons, the
    API's `rule.index` and `rule_index`, the ledger, lint output and the portal. `index` in
    this module is the 0-based position in `rules`."""
    return None if index is None else index + 1


@dataclass(frozen=True, slots=True)
class MatchedRule:
    index: int
    pattern: str
    action: Verdict

    @property
    def number(self) -> int:
        return self.index + 1


@dataclass(frozen=True, slots=True)
class Segment:
    """One key the call was matched as (a shell segment, a write, a concern) and its verdict."""

    subject: str
    verdict: Verdict
    rule_index: int | None
    reason: str | None = None

    @property
    def rule_number(self) -> int | None:
        return rule_number(self.rule_index)


@dataclass(frozen=True, slots=True)
class Evaluation:
    verdict: Verdict
    rule: MatchedRule | None
    segments: tuple[Segment, ...]
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        rule = self.rule
        return {
            "verdict": self.verdict.value,
            "rule": None
            if rule is None
            else {"index": rule.number, "pattern": rule.pattern, "action": rule.action.value},
            "segments": [
                {
                    "subject": s.subject,
                    "verdict": s.verdict.value,
                    "rule_index": s.rule_number,
                    "reason": s.reason,
                }
                for s in self.segments
            ],
            "error": self.error,
        }


def _failed(subject: str, error: str) -> Evaluation:
    return Evaluation(Verdict.ASK, None, (Segment(subject, Verdict.ASK, None, error),), error)


_shell_evaluations = ProcessCache(_REMEMBERED)


def forget_evaluations() -> None:
    """Empty the per-process memories of keys and evaluations (as a new process has them)."""
    _first_matches.clear()
    _shell_evaluations.clear()


class _PrefixIndex:
    __slots__ = ("buckets", "lengths")

    def __init__(self, entries: Iterable[tuple[str, int]]):
        buckets: dict[str, list[int]] = {}
        for prefix, index in entries:
            buckets.setdefault(prefix, []).append(index)
        self.buckets = {prefix: tuple(indices) for prefix, indices in buckets.items()}
        self.lengths = tuple(sorted({len(prefix) for prefix in buckets}))

    def collect(self, key: str, into: list[tuple[int, ...]]) -> None:
        size = len(key)
        get = self.buckets.get
        for length in self.lengths:
            if length > size:
                break
            bucket = get(key[:length])
            if bucket:
                into.append(bucket)


class CompiledPolicy:
    """Rules compiled once; `evaluate` and `evaluate_key` never re-parse a pattern."""

    def __init__(self, rules: Sequence[Rule], document: PolicyDocument | None = None):
        self._ref = weakref.ref(self)  # what the per-process memories know this policy by
        self.rules = tuple(rules)
        self.document = document
        self._globs = [CompiledGlob(rule.pattern) for rule in self.rules]
        self._actions = [rule.action for rule in self.rules]
        # Parallel lists keep the hot loop to one comparison and one C call per candidate.
        self._regex_limits = [glob.regex_limit for glob in self._globs]
        self._regex_matches = [glob.regex_match for glob in self._globs]
        self._required = [glob.required for glob in self._globs]
        shared, by_tool = [], {}
        for index, glob in enumerate(self._globs):
            tool, colon, _ = glob.literal_prefix.partition(":")
            if colon:
                by_tool.setdefault(tool, []).append((glob.literal_prefix, index))
            else:
                shared.append((glob.literal_prefix, index))
        self._shared = _PrefixIndex(shared)
        self._by_tool = {tool: _PrefixIndex(entries) for tool, entries in by_tool.items()}
        # Every literal prefix in order, to find those that extend a given start (bisect).
        self._prefixes = sorted(
            (glob.literal_prefix, index) for index, glob in enumerate(self._globs)
        )

    def first_match(self, key: str) -> int | None:
        """Index of the first rule whose pattern matches `key`; raises GlobError."""
        if len(key) > _MEMO_KEY_CHARS:
            return self._first_match(key)
        memo = (self._ref, key)
        try:
            return _first_matches[memo]
        except KeyError:
            pass
        index = self._first_match(key)  # a GlobError is raised again next time: not kept
        if len(_first_matches) >= _MEMO_SIZE:
            _first_matches.clear()
        _first_matches[memo] = index
        return index

    def _first_match(self, key: str) -> int | None:
        buckets: list[tuple[int, ...]] = []
        self._shared.collect(key, buckets)
        tool, colon, _ = key.partition(":")
        if colon and (index := self._by_tool.get(tool)) is not None:
            index.collect(key, buckets)
        if not buckets:
            return None
        candidates = buckets[0] if len(buckets) == 1 else sorted(itertools.chain(*buckets))
        size = len(key)
        limits, matches, required = self._regex_limits, self._regex_matches, self._required
        for rule_index in candidates:
            needle = required[rule_index]
            if needle and needle not in key:
                continue
            if size <= limits[rule_index]:
                if matches[rule_index](key) is not None:
                    return rule_index
            elif self._globs[rule_index].matches(key):
                return rule_index
        return None

    def matched_rule(self, index: int) -> MatchedRule:
        return MatchedRule(index, self.rules[index].pattern, self._actions[index])

    def evaluate(
        self, tool: str, arguments: Any, match_argument: MatchArgument | None = None
    ) -> Evaluation:
        if match_argument is not None and match_argument.kind == "shell":
            script = arguments.get(match_argument.name) if isinstance(arguments, Mapping) else None
            # a call that reports links on disk is decided by them too: not by the script alone
            if (
                type(script) is str
                and len(script) <= _REMEMBERED_CHARS
                and LINKS_ARGUMENT not in arguments
            ):
                key = (self._ref, tool, match_argument, script)
                evaluation = _shell_evaluations.get(key)
                if evaluation is None:
                    evaluation, settled = self._evaluate(tool, arguments, match_argument)
                    if settled and len(evaluation.segments) <= _REMEMBERED_SEGMENTS:
                        _shell_evaluations.put(key, evaluation)
                return evaluation
        return self._evaluate(tool, arguments, match_argument)[0]

    def _evaluate(
        self, tool: str, arguments: Any, match_argument: MatchArgument | None
    ) -> tuple[Evaluation, bool]:
        """The evaluation, and whether it follows from the call alone (not from an
        unforeseen error, which another attempt might not meet): only those are kept."""
        try:
            reading = read_call(tool, arguments, match_argument)
        except SubjectError as error:
            return _failed(f"{tool}:", str(error)), True
        except Exception as error:  # fail closed on anything unforeseen
            return _failed(f"{tool}:", f"the call could not be read: {error!r}"), False
        try:
            return self._decide(reading), True
        except Exception as error:
            return _failed(reading.whole_key, f"evaluation failed: {error!r}"), False

    def evaluate_key(
        self, call: str, kinds: Mapping[str, MatchArgument | None] | None = None
    ) -> Evaluation:
        """Evaluate a literal `tool:rest`; a shell or path tool reads `rest` as its argument."""
        tool, colon, rest = call.partition(":")
        match_argument = kinds.get(tool) if colon and kinds else None
        if match_argument is not None and match_argument.kind in ("shell", "path"):
            return self.evaluate(tool, {match_argument.name: rest}, match_argument)
        if is_oversize(rest if colon else call):
            return _failed(call[:200], "the subject is larger than 64 KiB")
        try:
            index = self.first_match(call)
        except GlobError as error:
            return _failed(call, str(error))
        if index is None:
            return Evaluation(Verdict.ASK, None, (Segment(call, Verdict.ASK, None),))
        action = self._actions[index]
        return Evaluation(action, self.matched_rule(index), (Segment(call, action, index),))

    def _decide(self, reading: CallReading) -> Evaluation:
        segments: list[Segment] = []
        error = reading.error
        merged: dict[tuple[str, bool], list] = {}  # (key, open) -> [binding, never_only, reqs]
        open_budget = [OPEN_STEP_BUDGET]  # steps for every open key of the call together
        for probe in reading.probes:
            entry = merged.get((probe.key, probe.open_tail))
            if entry is None:
                merged[(probe.key, probe.open_tail)] = [
                    probe.binding,
                    probe.never_only,
                    probe.requires,
                ]
            else:
                entry[0] = entry[0] or probe.binding
                entry[1] = entry[1] and probe.never_only
                entry[2] = entry[2] + probe.requires if probe.requires else entry[2]
        for (key, open_tail), (binds, never_only, requires) in merged.items():
            subject = key + "…" if open_tail else key
            try:
                if open_tail:
                    index, partly = self.first_match_open(key, open_budget)
                else:
                    index, partly = self.first_match(key), False
            except GlobError as problem:
                error = error or str(problem)
                segments.append(Segment(subject, Verdict.ASK, None, str(problem)))
                continue
            if index is None:
                if binds and not never_only:
                    segments.append(Segment(subject, Verdict.ASK, None))
                continue
            action = self._actions[index]
            if partly:
                if binds and not never_only:
                    segments.append(Segment(subject, Verdict.ASK, None, self._partly(index)))
                continue
            if action is Verdict.ALWAYS:
                if not binds or never_only:
                    continue  # a non-binding view that is allowed cannot change the outcome
                unnamed = self._unnamed(index, requires)
                if unnamed:
                    segments.append(Segment(subject, Verdict.ASK, None, unnamed))
                    continue
            elif never_only and action is not Verdict.NEVER:
                continue
            elif not binds and any(s.rule_index == index for s in segments):
                continue  # a view of a command another segment already shows that rule for
            segments.append(Segment(subject, action, index))
        segments += [Segment(c.subject, Verdict.ASK, None, c.reason) for c in reading.concerns]
        if not segments:
            segments.append(Segment(reading.whole_key, Verdict.ASK, None))
        verdict = max((segment.verdict for segment in segments), key=_RANK.__getitem__)
        rule = next(
            (
                self.matched_rule(s.rule_index)
                for s in segments
                if s.verdict is verdict and s.rule_index is not None
            ),
            None,
        )
        if verdict is Verdict.ASK and error is None:
            exact = self._exact_allow(reading.whole_key)
            if exact is not None:
                segments.append(
                    Segment(
                        reading.whole_key, Verdict.ALWAYS, exact, "an exact rule allows this call"
                    )
                )
                return Evaluation(Verdict.ALWAYS, self.matched_rule(exact), tuple(segments))
        return Evaluation(verdict, rule, tuple(segments), error)

    def first_match_open(self, start: str, budget: list[int]) -> tuple[int | None, bool]:
        """The rule that decides every key beginning with `start` and going on (words the
        script does not show follow it): (index, False) for the first rule that matches
        all of them; (index, True) when the first rule that may match some of them and is
        not ALWAYS does not match them all (it decides only some: the caller asks).
        An ALWAYS rule that matches only some is passed over: the rest go on down.
        Raises GlobError, also when the call's `budget` of steps runs out."""
        candidates: list[tuple[int, ...]] = []
        self._shared.collect(start, candidates)  # literal prefixes `start` begins with
        tool, colon, _ = start.partition(":")
        if colon and (index := self._by_tool.get(tool)) is not None:
            index.collect(start, candidates)
        longer = []  # ... and those that begin with `start`
        at = bisect.bisect_left(self._prefixes, (start, -1))
        while at < len(self._prefixes) and self._prefixes[at][0].startswith(start):
            longer.append(self._prefixes[at][1])
            at += 1
        for index in sorted({*itertools.chain(*candidates), *longer}):
            glob = self._globs[index]
            if not glob.could_continue(start, budget):
                continue
            if glob.matches_every_continuation(start):
                return index, False
            if self._actions[index] is not Verdict.ALWAYS:
                return index, True
        return None, False

    def _partly(self, index: int) -> str:
        rule = self.rules[index]
        return (
            "words the command does not show follow (a glob's expansion, xargs' input): "
            f"rule {rule_number(index)} ({rule.pattern!r}, {rule.action.value}) matches some "
            "of them, so the call is asked about"
        )

    def _unnamed(self, index: int, requires: tuple) -> str | None:
        """Why ALWAYS rule `index` cannot allow a probe whose requirements it does not name."""
        pattern = self.rules[index].pattern
        for requirement in requires:
            if not any(
                pattern_names(pattern, name, requirement.times) for name in requirement.names
            ):
                return (
                    f"{requirement.reason}: rule {rule_number(index)} ({pattern!r}) matches "
                    f"but does not name {requirement.names[0]}"
                )
        return None

    def _exact_allow(self, whole_key: str) -> int | None:
        try:
            index = self.first_match(whole_key)
        except GlobError:
            return None
        if index is None or self._actions[index] is not Verdict.ALWAYS:
            return None
        return index if self._globs[index].exact is not None else None


def compile_policy(source: PolicyDocument | Iterable[Rule | Mapping[str, Any]]) -> CompiledPolicy:
    """Compile a document, or a bare list of rules (Rule objects or {pattern, action} dicts)."""
    if isinstance(source, PolicyDocument):
        return CompiledPolicy(source.rules, source)
    rules = [item if isinstance(item, Rule) else parse_rule(item) for item in source]
    return CompiledPolicy(rules)
