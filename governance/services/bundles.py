"""Capability bundles imported from YAML."""

import re

import yaml
from django.db import transaction

from fluidbox.canonical import digest_of
from governance.errors import Invalid
from governance.models import Access, BundleTool, CapabilityBundle, Organization

TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
MATCH_KINDS = ("shell", "path", "text")
_TOOL_KEYS = {"name", "access", "match_argument", "secrets", "schema", "description"}


def _tool_from(raw: object, index: int) -> dict:
    if not isinstance(raw, dict):
        raise Invalid(f"tools[{index}] must be a mapping")
    unknown = set(raw) - _TOOL_KEYS
    if unknown:
        raise Invalid(f"tools[{index}] has unknown keys: {', '.join(sorted(unknown))}")
    name = raw.get("name")
    if not isinstance(name, str) or not TOOL_NAME.match(name):
        raise Invalid(f"tools[{index}].name must match {TOOL_NAME.pattern}")
    access = raw.get("access", Access.WRITE)
    if access not in Access.values:
        raise Invalid(f"tool {name}: access must be read or write")
    match = raw.get("match_argument")
    if match is not None:
        if (
            not isinstance(match, dict)
            or not isinstance(match.get("name"), str)
            or match.get("kind", "text") not in MATCH_KINDS
            or set(match) - {"name", "kind"}
        ):
            raise Invalid(f"tool {name}: match_argument needs a name and kind shell|path|text")
        match = {"name": match["name"], "kind": match.get("kind", "text")}
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


def parse_bundle(text: str) -> tuple[str, list[dict]]:
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise Invalid(f"bundle YAML does not parse: {error}") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        raise Invalid("a bundle needs a name and a list of tools")
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
    bundle, _ = CapabilityBundle.objects.update_or_create(
        org=org, name=name, defaults={"content": text}
    )
    bundle.tools.all().delete()
    BundleTool.objects.bulk_create(BundleTool(bundle=bundle, **tool) for tool in tools)
    return bundle
