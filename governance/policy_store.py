"""The Django side of the rule engine: compiled versions cached, tool kinds known per org."""

import copy

from governance.models import BundleTool, Connection, PolicyVersion
from governance.policy import CompiledPolicy, MatchArgument, PolicyDocument, compile_policy
from governance.process_cache import ProcessCache

# Keyed by (pk, digest): a version never changes, but a primary key can be reused after a
# rolled-back transaction (or a restored database), and the digest tells them apart.
_compiled = ProcessCache(size=256)
_versions = ProcessCache(size=256)


class FrozenVersionMissing(Exception):
    """A run's frozen policy version is gone, or its digest is not the one the run froze."""


def document_of(version: PolicyVersion) -> PolicyDocument:
    return PolicyDocument.from_dict(version.document)


def compiled_policy(version: PolicyVersion) -> CompiledPolicy:
    """Versions are immutable, so each one is compiled once per process."""
    key = (version.pk, version.digest)
    compiled = _compiled.get(key)
    if compiled is None:
        compiled = compile_policy(document_of(version))
        _compiled.put(key, compiled)
    return compiled


def frozen_version(pk: int, digest: str) -> PolicyVersion:
    """The policy version a run froze, read once per process. Its YAML text and document
    stay deferred: the compiled policy is cached too and loads the document only on a miss.
    Each caller gets its own copy, so nothing one request loads onto it (its policy, say,
    which may be renamed later) is seen by another."""
    version = _versions.get((pk, digest))
    if version is None:
        version = PolicyVersion.objects.defer("content", "document").filter(pk=pk).first()
        if version is None or version.digest != digest:
            raise FrozenVersionMissing(f"policy version {pk} is missing or altered")
        _versions.put((pk, digest), version)
    return copy.copy(version)


def forget_versions() -> None:
    """Empty both caches, as in a freshly started process."""
    _compiled.clear()
    _versions.clear()


def match_argument_of(raw: dict | None) -> MatchArgument | None:
    """A stored `match_argument` (bundle tool or frozen tool) as the engine reads it."""
    if not raw:
        return None
    return MatchArgument(
        name=raw["name"],
        kind=raw.get("kind", "text"),
        write_tool=raw.get("write_tool", "write_file"),
        read_tool=raw.get("read_tool", "read_file"),
        shell=raw.get("shell", "bash"),
        cwd=raw.get("cwd"),
    )


def known_tools(org_id: int) -> dict[str, MatchArgument | None]:
    """Every tool name an org's bundles and connection photographs offer, with its kind."""
    tools: dict[str, MatchArgument | None] = {}
    for name, match in BundleTool.objects.filter(bundle__org_id=org_id).values_list(
        "name", "match_argument"
    ):
        tools[name] = match_argument_of(match)
    for slug, photograph in Connection.objects.filter(org_id=org_id).values_list(
        "slug", "photograph"
    ):
        for tool in photograph or []:
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                tools[f"{slug}.{tool['name']}"] = None
    return tools
