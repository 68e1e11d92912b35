"""Saving policies as immutable versions, and the dry-run, lint and replay around them."""

import dataclasses

from django.contrib.auth.models import User
from django.db import transaction

from governance.errors import Conflict, Invalid
from governance.models import Organization, Policy, PolicyVersion, ToolCall
from governance.policy import (
    MAX_PATTERN_BYTES,
    PolicyDocument,
    PolicyError,
    RecordedCall,
    Rule,
    Verdict,
    compile_policy,
    escape_pattern,
    lint,
    replay,
    run_tests,
)
from governance.policy_store import compiled_policy, known_tools, match_argument_of
from ledger.redaction import redact_text

REPLAY_LIMIT = 5000


def parse_policy(text: str) -> PolicyDocument:
    try:
        return PolicyDocument.from_yaml(text)
    except PolicyError as error:
        raise Invalid(f"policy does not parse: {error}", code="invalid_policy") from None


def test_failures(document: PolicyDocument, org: Organization) -> list[str]:
    tools = known_tools(org.pk)
    failures = run_tests(document, tools)
    return [
        f"{f.call}: expected {f.expected}, got {f.got}{_unknown_tool(f.call, tools, org)}"
        for f in failures
    ]


def _unknown_tool(call: str, tools, org: Organization) -> str:
    """Why a test of a tool the organization has no bundle or connection for may fail: its
    call is matched as written (a shell command is not split, a path not normalised)."""
    tool = call.split(":", 1)[0]
    if tool in tools:
        return ""
    return (
        f" ({org.slug} has no tool {tool!r} yet, so the call is matched as written: import "
        "the bundle or connection that brings it first)"
    )


@transaction.atomic
def policy_save_document(
    *,
    org: Organization,
    document: PolicyDocument,
    author: User | None,
    note: str = "",
    base_version: int | None = None,
) -> PolicyVersion:
    """Every save is a new immutable version; a document whose tests fail is not saved.

    `base_version`: the version the draft was made from (the editor's). A save committed
    since then is refused (Conflict, `policy_changed`), not silently undone by this one."""
    failures = test_failures(document, org)
    if failures:
        raise Invalid(
            "the policy's tests fail; nothing was saved: " + "; ".join(failures[:10]),
            code="policy_tests_failed",
            extra={"failures": failures},
        )
    policy, _ = Policy.objects.get_or_create(org=org, name=document.name)
    # Lock the policy row so concurrent saves number their versions one after the other.
    policy = Policy.objects.select_for_update().get(pk=policy.pk)
    last = policy.versions.order_by("-number").values_list("number", flat=True).first() or 0
    # Checked under the lock: two editors who both opened v3 cannot both save over it.
    if base_version is not None and last != base_version:
        raise Conflict(
            f"policy {policy.name!r} changed since v{base_version}: v{last} is now current",
            code="policy_changed",
            extra={"current": last},
        )
    version = PolicyVersion.objects.create(
        policy=policy,
        number=last + 1,
        content=document.to_yaml(),
        document=document.to_dict(),
        digest=document.digest(),
        autonomous_fallback=document.autonomous_fallback,
        approval_timeout=document.approval_timeout,
        author=author,
        note=note[:200],
    )
    Policy.objects.filter(pk=policy.pk).update(current_version=version)
    return version


def policy_save_named(
    *,
    org: Organization,
    name: str,
    text: str,
    author: User | None,
    note: str = "",
    base_version: int | None = None,
) -> PolicyVersion:
    """Save YAML as a new version of the policy `name` (the YAML's own name must agree)."""
    document = parse_policy(text)
    if document.name != name:
        raise Invalid(f"the YAML names policy {document.name!r}, not {name!r}")
    return policy_save_document(
        org=org, document=document, author=author, note=note, base_version=base_version
    )


def policy_lint_json(version: PolicyVersion) -> list[dict]:
    """The lint warnings as the API answers them: `rule_index` counted from 1, as on every
    other surface."""
    document = PolicyDocument.from_dict(version.document)
    return [
        {"rule_index": w.rule_number, "code": w.code, "message": w.message}
        for w in lint(document, known_tools(version.policy.org_id))
    ]


def policy_save(
    *, org: Organization, text: str, author: User | None, note: str = ""
) -> PolicyVersion:
    return policy_save_document(org=org, document=parse_policy(text), author=author, note=note)


def exact_rule_pattern(call_key: str, arguments) -> str:
    """The pattern Approve & Remember adds for `call_key` (of a call with these `arguments`).
    Invalid when it is over the bound every pattern has: at the top of a policy, a longer one
    would fail every evaluation of that policy closed (each NEVER rule would ask, or become an
    autonomous run's fallback). Invalid too when the key holds a secret (a value the
    arguments hold under a secret-looking key, or an inline token): a policy is read by every
    admin, exported and kept in every later version, so no rule may carry one."""
    if redact_text(call_key, arguments=arguments) != call_key:
        raise Invalid(
            "this call holds a secret, which a policy rule would keep in clear for everyone who "
            "reads the policy: approve it, or remember it for this run only",
            code="secret_in_rule",
        )
    pattern = escape_pattern(call_key)
    size = len(pattern.encode("utf-8", "surrogatepass"))
    if size > MAX_PATTERN_BYTES:
        raise Invalid(
            f"this call is too long to become a policy rule ({size} bytes as a pattern; a "
            f"rule holds at most {MAX_PATTERN_BYTES}): approve it, or remember it for this "
            "run only",
            code="too_long_to_remember",
        )
    return pattern


@transaction.atomic
def policy_prepend_exact_rule(
    *,
    policy: Policy,
    call_key: str,
    tool: str,
    arguments,
    match_argument: dict | None,
    author: User | None,
    note: str,
) -> PolicyVersion:
    """Approve & Remember: an exact-match ALWAYS rule at the top, as a new version.

    The call was asked about under the version its run froze; the policy may deny it since.
    A rule at the top is the first match, so it would undo that NEVER: refused (Conflict)."""
    rule = Rule(pattern=exact_rule_pattern(call_key, arguments), action=Verdict.ALWAYS)
    # The policy row locked before its current version is read, as `policy_save_document`
    # locks it to number versions: a save committed meanwhile is built on, never undone.
    policy = Policy.objects.select_for_update().get(pk=policy.pk)
    current = policy.current_version
    document = PolicyDocument.from_dict(current.document)
    now = compiled_policy(current).evaluate(tool, arguments, match_argument_of(match_argument))
    if now.verdict is Verdict.NEVER:
        where = f" (rule {now.rule.number}: {now.rule.pattern!r})" if now.rule else ""
        raise Conflict(
            f"policy {policy.name!r} v{current.number} denies this call{where}; a remembered "
            "rule may not override it. Approve it, or remember it for this run only",
            code="policy_denies",
        )
    if document.rules and document.rules[0] == rule:
        return current
    updated = dataclasses.replace(document, rules=[rule, *document.rules])
    return policy_save_document(org=policy.org, document=updated, author=author, note=note)


def evaluation_json(evaluation) -> dict:
    rule = evaluation.rule
    return {
        "verdict": str(evaluation.verdict),
        "rule": (
            {"index": rule.number, "pattern": rule.pattern, "action": str(rule.action)}
            if rule
            else None
        ),
        "segments": [
            {
                "subject": segment.subject,
                "verdict": str(segment.verdict),
                "rule_index": segment.rule_number,
            }
            for segment in evaluation.segments
        ],
        "error": evaluation.error,
    }


def policy_evaluate(
    *, policy: Policy, call: str | None = None, tool: str | None = None, arguments=None
) -> dict:
    compiled = compiled_policy(policy.current_version)
    kinds = known_tools(policy.org_id)
    if call is not None:
        evaluation = compiled.evaluate_key(call, kinds)
    else:
        evaluation = compiled.evaluate(tool, arguments or {}, kinds.get(tool))
    return {"policy_version": policy.current_version.number, **evaluation_json(evaluation)}


def policy_draft_lint(*, org: Organization, text: str) -> list[dict]:
    document = parse_policy(text)
    return [dataclasses.asdict(w) for w in lint(document, known_tools(org.pk))]


def policy_replay(*, policy: Policy, draft_text: str, limit: int = REPLAY_LIMIT) -> dict:
    """Every recorded call of this policy's runs whose verdict the draft would change."""
    draft = parse_policy(draft_text)
    new = compile_policy(draft)
    calls = (
        ToolCall.objects.filter(run__policy_version__policy=policy)
        .select_related("run__policy_version")
        .order_by("-created_at")[:limit]
    )
    changes = []
    examined = 0
    by_version: dict[int, list] = {}
    for call in calls:
        examined += 1
        by_version.setdefault(call.run.policy_version_id, []).append(call)
    for calls_of_version in by_version.values():
        version = calls_of_version[0].run.policy_version
        frozen = {
            t.name: match_argument_of(t.match_argument)
            for t in calls_of_version[0].run.frozen_tools.all()
        }
        recorded = [
            RecordedCall(
                id=call.pk,
                tool=call.tool,
                arguments=call.arguments if isinstance(call.arguments, dict) else {},
                match_argument=frozen.get(call.tool),
            )
            for call in calls_of_version
        ]
        by_id = {call.pk: call for call in calls_of_version}
        for change in replay(compiled_policy(version), new, recorded):
            recorded_call = by_id[change.id]
            changes.append(
                {
                    "tool_call": change.id,
                    "run": str(recorded_call.run_id),
                    "tool_call_id": recorded_call.tool_call_id,
                    "call": change.call_key,
                    "old_verdict": str(change.old_verdict),
                    "new_verdict": str(change.new_verdict),
                    "recorded_decision": recorded_call.decision,
                    "policy_version": version.number,
                }
            )
    return {"examined": examined, "changed": changes}
