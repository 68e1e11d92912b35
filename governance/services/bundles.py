"""Capability bundles imported from YAML."""

import math
import re

from django.db import transaction

from fluidbox.canonical import digest_of
from governance.errors import Invalid
from governance.models import Access, BundleTool, CapabilityBundle, Organization
from governance.policy.yaml_format import YamlProblem, load_yaml

# What `CapabilityBundle.name` (a SlugField of 100) holds.
BUNDLE_NAME = re.compile(r"^[A-Za-z0-9_-]{1,100}$")
TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
MATCH_KINDS = ("shell", "path", "text")
SHELL_DIALECTS = ("bash", "sh", "zsh")
_MATCH_KEYS = {"name", "kind", "shell", "write_tool", "read_tool", "cwd"}
_TOOL_KEYS = {"name", "access", "match_argument", "secrets", "schema", "description"}


def _tool_from(raw: object, index: int) -> dict:
    if not isinstance(raw, dict):
        raise Invalid(f"tools[{index}] must be a mapping")
    unknown = set(raw) - _TOOL_KEYS
    if unknown:
        raise Invalid(f"tools[{index}] has unknown keys: {', '.join(sorted(unknown))}")
    name = raw.get("name")
    if not isinstance(name, str) or not TOOL_NAME.fullmatch(name):
        raise Invalid(f"tools[{index}].name must match {TOOL_NAME.pattern}")
    access = raw.get("access", Access.WRITE)
    if access not in Access.values:
        raise Invalid(f"tool {name}: access must be read or write")
    match = raw.get("match_argument")
    if match is not None:
        match = _match_argument(name, match)
    secrets = raw.get("secrets", False)
    if not isinstance(secrets, bool):
        raise Invalid(f"tool {name}: secrets must be true or false")
    schema = raw.get("schema", {"type": "object"})
    if not isinstance(schema, dict):
        raise Invalid(f"tool {name}: schema must be a mapping")
    definition = {
        "name": name,
        "access": access,
        "match_argument": match,
        "secrets": secrets,
        "schema": schema,
    }
    return {**definition, "definition_digest": digest_of(definition)}


def _match_argument(tool: str, match: object) -> dict:
    """`{name, kind}`; a shell tool may add `shell` (bash, sh = dash, zsh; bash by default),
    the tool names its writes and reads are matched as (`write_tool`, `read_tool`) and the
    directory its commands run in (`cwd`: relative paths in them resolve there)."""
    if (
        not isinstance(match, dict)
        or not isinstance(match.get("name"), str)
        or match.get("kind", "text") not in MATCH_KINDS
        or set(match) - _MATCH_KEYS
    ):
        raise Invalid(
            f"tool {tool}: match_argument needs a name and kind shell|path|text "
            f"(and, for a shell, optionally {', '.join(sorted(_MATCH_KEYS - {'name', 'kind'}))})"
        )
    kind = match.get("kind", "text")
    clean = {"name": match["name"], "kind": kind}
    extras = set(match) & {"shell", "write_tool", "read_tool", "cwd"}
    if extras and kind != "shell":
        raise Invalid(f"tool {tool}: {', '.join(sorted(extras))} only apply to kind shell")
    if "shell" in match:
        if match["shell"] not in SHELL_DIALECTS:
            raise Invalid(f"tool {tool}: match_argument.shell must be bash, sh or zsh")
        clean["shell"] = match["shell"]
    if "cwd" in match:
        if not isinstance(match["cwd"], str) or not match["cwd"].startswith("/"):
            raise Invalid(f"tool {tool}: match_argument.cwd must be an absolute path")
        clean["cwd"] = match["cwd"]
    for key in ("write_tool", "read_tool"):
        if key in match:
            if not isinstance(match[key], str) or not TOOL_NAME.fullmatch(match[key]):
                raise Invalid(f"tool {tool}: match_argument.{key} must match {TOOL_NAME.pattern}")
            clean[key] = match[key]
    return clean


def _unstorable(value: object, where: str = "") -> str | None:
    """What keeps `value` from being stored and digested as JSON, said for the admin; None
    when nothing does. YAML reads more than JSON holds: keys that are numbers, booleans or
    null, dates, `!!binary`, `.nan`, and strings with NUL (a `\\0` escape) or a lone
    surrogate (`\\ud800`), which PostgreSQL and the digest refuse: refused here, not with a
    500 later. Depth is bounded by the YAML reader's."""
    if isinstance(value, str):
        if "\x00" in value:
            return f"{where or 'a value'} contains NUL characters (YAML \\0 escapes)"
        if any("\ud800" <= char <= "\udfff" for char in value):
            return f"{where or 'a value'} contains a lone surrogate (a YAML \\ud800 escape)"
        return None
    if value is None or isinstance(value, bool | int):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{where or 'a number'} is not finite"
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"key {key!r} under {where or 'the bundle'} must be a string (quote it)"
            problem = _unstorable(key, f"key {key[:40]!r}") or _unstorable(
                item, f"{where}.{key[:40]}" if where else key[:40]
            )
            if problem:
                return problem
        return None
    if isinstance(value, list):
        for index, item in enumerate(value):
            if problem := _unstorable(item, f"{where}[{index}]"):
                return problem
        return None
    return f"{where or 'a value'} is a {type(value).__name__}, which JSON does not hold (quote it)"


def parse_bundle(text: str) -> tuple[str, list[dict]]:
    # Read as strictly as a policy: a repeated key (`access: read` after `access: write`)
    # or an alias would make the tools something other than what the admin reviewed, and
    # aliases nested in each other (a billion laughs) would expand past any memory.
    try:
        raw = load_yaml(text)
    except YamlProblem as error:
        raise Invalid(f"bundle YAML does not parse: {error}") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        raise Invalid("a bundle needs a name and a list of tools")
    if problem := _unstorable(raw):
        raise Invalid(f"a bundle holds only what JSON holds: {problem}")
    if not BUNDLE_NAME.match(raw["name"]):
        raise Invalid(f"a bundle's name must match {BUNDLE_NAME.pattern}")
    tools = raw.get("tools")
    if not isinstance(tools, list) or not tools:
        raise Invalid("a bundle needs a non-empty list of tools")
    parsed = [_tool_from(tool, index) for index, tool in enumerate(tools)]
    names = [tool["name"] for tool in parsed]
    if len(set(names)) != len(names):
        raise Invalid("tool names repeat within the bundle")
    return raw["name"], parsed


@transaction.atomic
def bundle_import(*, org: Organization, text: str) -> CapabilityBundle:
    """Create or replace a bundle. Runs already created keep the tools they froze."""
    name, tools = parse_bundle(text)
    _refuse_another_reading(org, name, tools)
    bundle, _ = CapabilityBundle.objects.update_or_create(
        org=org, name=name, defaults={"content": text}
    )
    bundle.tools.all().delete()
    BundleTool.objects.bulk_create(BundleTool(bundle=bundle, **tool) for tool in tools)
    return bundle


def _refuse_another_reading(org: Organization, name: str, tools: list[dict]) -> None:
    """One tool name, one match argument per organization. A policy's `tests:`, lint and dry
    runs read a tool as the organization's bundles declare it (one reading per name); a
    second bundle reading `run_command` as text while another splits it as shell would let
    a run of the first allow what the policy's passing tests say is denied."""
    declared = {tool["name"]: tool.get("match_argument") or None for tool in tools}
    others = (
        BundleTool.objects.filter(bundle__org=org, name__in=declared)
        .exclude(bundle__name=name)
        .select_related("bundle")
        .order_by("name", "bundle__name")
    )
    for other in others:
        if (other.match_argument or None) != declared[other.name]:
            raise Invalid(
                f"tool {other.name}: bundle {other.bundle.name!r} already declares it with "
                f"match_argument {other.match_argument!r}; a tool is read one way in an "
                "organization (policies are tested and linted against that reading): use "
                "the same match_argument, or another tool name"
            )
