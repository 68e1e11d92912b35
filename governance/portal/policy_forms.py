"""The policy editor's forms: ordered rules, the header fields, the `tests:` YAML, a dry run.

They only read input; the document they build is saved by `policy_save_document`.
"""

import re

from django import forms

from governance.api.parsers import loads_strict
from governance.models import AutonomousFallback
from governance.numerals import numeral
from governance.policy import PolicyDocument, PolicyError, Verdict
from governance.policy.document import MAX_APPROVAL_TIMEOUT, MAX_RULES
from governance.policy.invisible import flagged
from governance.policy.yaml_format import YamlProblem, load_yaml
from governance.schemas import arguments_refusal

ACTIONS = [(v.value, v.value) for v in Verdict]
UNORDERED = 10**9
_ESCAPE = re.compile(r"\\u\{([0-9A-Fa-f]{1,6})\}")


def pattern_for_input(text: str) -> str:
    """`text` as a one-line text box can carry it and a person can read it: every invisible,
    control or look-alike character as `\\u{…}` (a text box drops newlines, so a rule saved
    unchanged would otherwise change), and a literal `\\u{` as `\\u{5c}u{`."""
    positions = flagged(text, layout_is_visible=False)
    if not positions and "\\u{" not in text:
        return text
    out = []
    for index, char in enumerate(text):
        if index in positions:
            out.append(f"\\u{{{ord(char):x}}}")
        elif char == "\\" and text.startswith("u{", index + 1):
            out.append("\\u{5c}")
        else:
            out.append(char)
    return "".join(out)


def pattern_from_input(text: str) -> str:
    """The inverse of `pattern_for_input`: each `\\u{hex}` is that character."""

    def character(match: re.Match) -> str:
        code = int(match.group(1), 16)
        return chr(code) if code <= 0x10FFFF else match.group(0)

    return _ESCAPE.sub(character, text)


class EscapedTextField(forms.CharField):
    """A one-line text field whose text round-trips exactly: shown through `pattern_for_input`,
    read back through `pattern_from_input`."""

    def __init__(self, **kwargs):
        kwargs.setdefault("strip", False)
        super().__init__(**kwargs)

    def to_python(self, value):
        return pattern_from_input(super().to_python(value))

    def bound_data(self, data, initial):
        return pattern_from_input(data) if isinstance(data, str) else data

    def prepare_value(self, value):
        return pattern_for_input(value) if isinstance(value, str) else value


class RuleForm(forms.Form):
    """One rule row. A row left blank is no rule (so a spare row never blocks a save)."""

    pattern = EscapedTextField(
        required=False,
        max_length=4096,
        widget=forms.TextInput(
            attrs={"class": "fb-pattern", "spellcheck": "false", "autocomplete": "off"}
        ),
    )
    action = forms.ChoiceField(choices=ACTIONS, initial=Verdict.ASK.value)


RuleFormSet = forms.formset_factory(
    RuleForm,
    extra=1,
    can_order=True,
    can_delete=True,
    max_num=MAX_RULES,
    absolute_max=MAX_RULES,
    validate_max=True,
)


class PolicySettingsForm(forms.Form):
    autonomous_fallback = forms.ChoiceField(
        choices=AutonomousFallback.choices,
        help_text="What ASK becomes in autonomous runs.",
    )
    approval_timeout = forms.IntegerField(
        min_value=1, max_value=MAX_APPROVAL_TIMEOUT, help_text="Seconds before ASK times out."
    )
    tests = forms.CharField(
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 6, "spellcheck": "false", "class": "fb-code"}),
        help_text='A YAML list, e.g. - {call: "run_command:rm -rf /", expect: NEVER}. '
        "A version whose tests fail is not saved.",
    )
    note = forms.CharField(required=False, max_length=200)
    base_version = forms.IntegerField(widget=forms.HiddenInput)


class DryRunForm(forms.Form):
    call = EscapedTextField(
        required=False,
        max_length=70000,
        label="Call",
        widget=forms.TextInput(
            attrs={"placeholder": "run_command:ls; rm -rf /", "spellcheck": "false"}
        ),
    )
    tool = forms.CharField(required=False, max_length=200, label="or tool")
    arguments = forms.CharField(
        required=False,
        strip=False,
        label="with arguments (JSON)",
        widget=forms.Textarea(attrs={"rows": 2, "spellcheck": "false", "class": "fb-code"}),
    )

    def clean(self):
        data = super().clean()
        if bool(data.get("call")) == bool(data.get("tool")):
            raise forms.ValidationError("Give either a call (tool:subject) or a tool.")
        if data.get("tool"):
            # The API's reading of arguments (its depth bound keeps a deep `[[[…` from
            # ending in a RecursionError, a 500), and what it refuses in them.
            try:
                data["arguments"] = loads_strict(data.get("arguments") or "{}")
            except ValueError as error:
                raise forms.ValidationError(f"Arguments are not JSON: {error}") from None
            if (problem := arguments_refusal(data["arguments"])) is not None:
                raise forms.ValidationError(f"Arguments: {problem}.")
        return data


class YamlImportForm(forms.Form):
    yaml = forms.CharField(
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 12, "spellcheck": "false", "class": "fb-code"}),
        label="Policy YAML",
    )
    file = forms.FileField(required=False, label="or a file")

    def clean(self):
        data = super().clean()
        upload = data.get("file")
        if upload is not None:
            try:
                data["yaml"] = upload.read(2 * 1024 * 1024).decode("utf-8")
            except UnicodeDecodeError:
                raise forms.ValidationError("The file is not UTF-8 text.") from None
        if not data.get("yaml", "").strip():
            raise forms.ValidationError("Paste the YAML or choose a file.")
        return data


def tests_yaml(document: PolicyDocument) -> str:
    """The `tests:` entries as the exporter writes them (quoted, invisible characters escaped)."""
    if not document.tests:
        return ""
    text = PolicyDocument(document.name, (), tests=document.tests).to_yaml()
    entries = text.split("\ntests:\n", 1)[1]
    return "\n".join(line[2:] for line in entries.splitlines()) + "\n"


def _parsed_tests(text: str) -> list:
    if not text.strip():
        return []
    try:
        value = load_yaml(text)
    except YamlProblem as problem:
        raise PolicyError([f"tests: {problem}"]) from None
    if isinstance(value, dict) and set(value) == {"tests"}:
        value = value["tests"]
    if not isinstance(value, list):
        raise PolicyError(["tests: must be a YAML list of {call, expect} entries"])
    return value


def ordered_rows(formset) -> list[tuple[int, dict]]:
    """(page position, rule) in the order the ORDER numbers give (ties keep the page order),
    without deleted and blank rows."""
    rows = []
    for position, form in enumerate(formset.forms):
        data = getattr(form, "cleaned_data", None) or {}
        if data.get("DELETE") or not data.get("pattern"):
            continue
        order = data.get("ORDER")
        rule = {"pattern": data["pattern"], "action": data["action"]}
        rows.append((UNORDERED if order is None else order, position, rule))
    return [(position, rule) for _, position, rule in sorted(rows, key=lambda r: r[:2])]


def forms_in_order(formset) -> list:
    """The rule rows as the page should show them: by their ORDER number, then position."""

    def key(item):
        position, form = item
        raw = str(form["ORDER"].value() or "").strip()
        # As the ORDER field reads it when valid; anything else sorts last, and the field
        # itself reports it.
        number = numeral(raw, 9)
        return (UNORDERED if number is None else number, position)

    return [form for _, form in sorted(enumerate(formset.forms), key=key)]


def attach_warnings(formset, warnings) -> None:
    """Put each lint warning on the row of the rule it is about (`form.lint`)."""
    positions = [position for position, _ in ordered_rows(formset)] if formset.is_bound else None
    for form in formset.forms:
        form.lint = []
    for warning in warnings:
        index = warning.rule_index
        if positions is not None:
            index = positions[index] if 0 <= index < len(positions) else None
        if index is not None and 0 <= index < len(formset.forms):
            formset.forms[index].lint.append(warning)


def draft_document(name: str, settings_form, formset) -> tuple[PolicyDocument | None, list[str]]:
    """The document the forms describe, or the problems that keep it from being one."""
    if not (settings_form.is_valid() and formset.is_valid()):
        return None, ["Some fields need attention (see below)."]
    data = settings_form.cleaned_data
    try:
        document = PolicyDocument.from_dict(
            {
                "name": name,
                "autonomous_fallback": data["autonomous_fallback"],
                "approval_timeout": data["approval_timeout"],
                "rules": [rule for _, rule in ordered_rows(formset)],
                "tests": _parsed_tests(data["tests"]),
            }
        )
    except PolicyError as error:
        return None, error.problems
    return document, []


def editor_initial(document: PolicyDocument, base_version: int) -> tuple[dict, list[dict]]:
    settings_initial = {
        "autonomous_fallback": document.autonomous_fallback,
        "approval_timeout": document.approval_timeout,
        "tests": tests_yaml(document),
        "base_version": base_version,
    }
    rules_initial = [
        {"pattern": rule.pattern, "action": rule.action.value, "ORDER": index + 1}
        for index, rule in enumerate(document.rules)
    ]
    return settings_initial, rules_initial
