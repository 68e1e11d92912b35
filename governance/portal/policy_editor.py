"""The policy page: rules in order, the saved YAML beside them, diffs between versions, lint,
a dry run of one call and a what-if replay of the draft, and saving through the service."""

import difflib

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse

from governance.admin.roles import portal_actor
from governance.errors import ServiceError
from governance.models import Policy, PolicyVersion
from governance.numerals import numeral
from governance.policy import PolicyDocument, PolicyError, compile_policy, lint
from governance.policy_store import document_of, known_tools
from governance.portal.pages import page_context
from governance.portal.policy_forms import (
    DryRunForm,
    PolicySettingsForm,
    RuleFormSet,
    YamlImportForm,
    attach_warnings,
    draft_document,
    editor_initial,
    forms_in_order,
)
from governance.portal.verbatim import highlighted
from governance.services.policies import policy_evaluate, policy_replay, policy_save_document

ACTIONS = ("save", "dry_run", "replay", "check", "load_yaml")


def version_diff(older: PolicyVersion, newer: PolicyVersion) -> list[tuple[str, str]]:
    """A unified diff of two versions' YAML as (kind, line) pairs for the template."""
    lines = difflib.unified_diff(
        older.content.splitlines(),
        newer.content.splitlines(),
        fromfile=f"v{older.number}",
        tofile=f"v{newer.number}",
        lineterm="",
        n=3,
    )
    kinds = {"+": "add", "-": "del", "@": "hunk"}
    out = []
    for line in lines:
        kind = "file" if line.startswith(("+++", "---")) else kinds.get(line[:1], "same")
        out.append((kind, line))
    return out


def _chosen_versions(request, versions: list[PolicyVersion]):
    by_number = {v.number: v for v in versions}

    def number(name: str, default: int | None) -> int | None:
        chosen = numeral(request.GET.get(name, ""), 9)
        return chosen if chosen in by_number else default

    newest = versions[0].number
    older = number("diff_from", versions[1].number if len(versions) > 1 else None)
    newer = number("diff_to", newest)
    if older is None or newer is None:
        return None, None
    return by_number[older], by_number[newer]


def _rule_lookup(document: PolicyDocument, number: int | None) -> str:
    if number is None or not 1 <= number <= len(document.rules):
        return ""
    rule = document.rules[number - 1]
    return highlighted(f"{rule.pattern} → {rule.action.value}", layout_is_visible=False)


def _show_segments(result: dict, document: PolicyDocument) -> dict:
    """Rule text beside each segment; invisible characters in subjects made visible."""
    for segment in result["segments"]:
        segment["rule"] = _rule_lookup(document, segment["rule_index"])
        segment["subject"] = highlighted(segment["subject"], layout_is_visible=False)
    if result.get("rule"):
        result["rule"]["pattern"] = highlighted(result["rule"]["pattern"], layout_is_visible=False)
    return result


def _dry_run(policy: Policy, draft: PolicyDocument | None, form: DryRunForm) -> dict | None:
    if not form.is_valid():
        return None
    data = form.cleaned_data
    call = data.get("call") or None
    tool = data.get("tool") or None
    arguments = data.get("arguments") if tool else None
    saved = policy_evaluate(policy=policy, call=call, tool=tool, arguments=arguments)
    _show_segments(saved, document_of(policy.current_version))
    result = {"saved": saved, "draft": None}
    if draft is not None and draft.digest() != policy.current_version.digest:
        kinds = known_tools(policy.org_id)
        compiled = compile_policy(draft)
        if call is not None:
            evaluation = compiled.evaluate_key(call, kinds)
        else:
            evaluation = compiled.evaluate(tool, arguments or {}, kinds.get(tool))
        result["draft"] = _show_segments(evaluation.as_dict(), draft)
        result["changed"] = result["draft"]["verdict"] != saved["verdict"]
    return result


def _bound_forms(request, action: str):
    importing = action == "load_yaml"
    return (
        PolicySettingsForm(request.POST),
        RuleFormSet(request.POST, prefix="rules"),
        _dry_run_form(request, action),
        YamlImportForm(request.POST, request.FILES, prefix="import")
        if importing
        else YamlImportForm(prefix="import"),
    )


def _dry_run_form(request, action: str) -> DryRunForm:
    """Bound (and so checked) only when the dry run is what was asked for; otherwise what
    was typed in it is kept, without an error about a box that was not used."""
    if action == "dry_run":
        return DryRunForm(request.POST, prefix="dry")
    typed = {name: request.POST.get(f"dry-{name}", "") for name in DryRunForm.base_fields}
    return DryRunForm(initial=typed, prefix="dry")


def _fresh_forms(document: PolicyDocument, base_version: int, dry=None):
    settings_initial, rules_initial = editor_initial(document, base_version)
    return (
        PolicySettingsForm(initial=settings_initial),
        RuleFormSet(initial=rules_initial, prefix="rules"),
        dry or DryRunForm(prefix="dry"),
        YamlImportForm(prefix="import"),
    )


def _load_yaml(request, policy: Policy, import_form) -> tuple[PolicyDocument | None, list[str]]:
    """Replace the draft with pasted YAML (nothing saved until Save)."""
    if not import_form.is_valid():
        return None, ["Paste the YAML or choose a file to load."]
    try:
        document = PolicyDocument.from_yaml(import_form.cleaned_data["yaml"])
    except PolicyError as error:
        return None, error.problems
    if document.name != policy.name:
        return None, [f"The YAML names policy {document.name!r}, not {policy.name!r}."]
    messages.info(request, "YAML loaded into the draft below. Nothing is saved until you save.")
    return document, []


def policy_editor_view(request, policy: Policy, *, may_save: bool):
    actor = portal_actor(request)
    current = policy.current_version
    action = request.POST.get("do", "") if request.method == "POST" else ""
    if request.method == "POST" and action not in ACTIONS:
        return HttpResponse("unknown action", status=400, content_type="text/plain")
    if action == "save" and not may_save:
        raise PermissionDenied("only admins of this organization save policies")

    problems: list[str] = []
    failures: list[str] = []
    dry_result = replay_result = None
    status = 200
    if request.method == "POST":
        settings_form, rules_formset, dry_form, import_form = _bound_forms(request, action)
        draft, problems = draft_document(policy.name, settings_form, rules_formset)
        if action == "load_yaml":
            loaded, problems = _load_yaml(request, policy, import_form)
            if loaded is not None:
                draft = loaded
                settings_form, rules_formset, dry_form, import_form = _fresh_forms(
                    loaded, current.number, dry_form
                )
        elif action == "save" and draft is not None:
            base = settings_form.cleaned_data["base_version"]
            try:
                version = policy_save_document(
                    org=policy.org,
                    document=draft,
                    author=actor.user,
                    note=settings_form.cleaned_data["note"],
                    base_version=base,
                )
            except ServiceError as error:
                if error.code == "policy_changed":
                    newest = error.extra["current"]
                    problems = [
                        f"The policy changed since you opened it: v{newest} is now current "
                        f"(you started from v{base}). Your draft is kept below; compare it with "
                        "the versions on the right, then save again."
                    ]
                    settings_form = _with_base(settings_form, newest)
                    policy.refresh_from_db()
                    current = policy.current_version
                    status = 409
                else:
                    failures = error.extra.get("failures", [])
                    problems = [error.detail] if not failures else []
                    status = 400
            else:
                messages.success(request, f"Saved {policy.name} v{version.number}.")
                return HttpResponseRedirect(request.path)
        elif action == "dry_run":
            dry_result = _dry_run(policy, draft, dry_form)
        elif action == "replay" and draft is not None:
            replay_result = policy_replay(policy=policy, draft_text=draft.to_yaml())
            for change in replay_result["changed"]:
                change["call"] = highlighted(
                    change.get("call", change.get("call_key", "")), layout_is_visible=False
                )
    else:
        settings_form, rules_formset, dry_form, import_form = _fresh_forms(
            document_of(current), current.number
        )
        draft = document_of(current)

    versions = list(policy.versions.select_related("author").order_by("-number"))
    diff_from, diff_to = _chosen_versions(request, versions)
    kinds = known_tools(policy.org_id)
    warnings = lint(draft, kinds) if draft is not None else []
    attach_warnings(rules_formset, warnings)
    context = page_context(
        request,
        f"Policy {policy.name}",
        policy=policy,
        current=current,
        may_save=may_save,
        settings_form=settings_form,
        rules=rules_formset,
        rule_forms=forms_in_order(rules_formset),
        dry_form=dry_form,
        import_form=import_form,
        draft_yaml=draft.to_yaml() if draft is not None else "",
        draft_differs=draft is not None and draft.digest() != current.digest,
        problems=problems,
        failures=failures,
        warnings=warnings,
        dry_result=dry_result,
        replay=replay_result,
        versions=versions,
        diff_from=diff_from,
        diff_to=diff_to,
        diff=version_diff(diff_from, diff_to) if diff_from and diff_to else [],
        opts=Policy._meta,
        changelist_url=reverse("admin:governance_policy_changelist"),
    )
    return render(request, "portal/policy_editor.html", context, status=status)


def _with_base(settings_form, number: int):
    data = settings_form.data.copy()
    data["base_version"] = str(number)
    return PolicySettingsForm(data)


def policy_export_view(request, policy: Policy) -> HttpResponse:
    response = HttpResponse(policy.current_version.content, content_type="text/yaml; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{policy.name}.yaml"'
    return response
