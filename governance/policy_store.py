"""The Django side of the rule engine: compiled versions cached, tool kinds known per org."""

import threading
from collections import OrderedDict

from governance.models import BundleTool, Connection, PolicyVersion
from governance.policy import CompiledPolicy, MatchArgument, PolicyDocument, compile_policy

_CACHE_SIZE = 256
# Keyed by (pk, digest): a version never changes, but a primary key can be reused after a
# rolled-back transaction (or a restored database), and the digest tells them apart.
_cache: OrderedDict[tuple[int, str], CompiledPolicy] = OrderedDict()
_lock = threading.Lock()


def document_of(version: PolicyVersion) -> PolicyDocument:
    return PolicyDocument.from_dict(version.document)


def compiled_policy(version: PolicyVersion) -> CompiledPolicy:
    """Versions are immutable, so each one is compiled once per process."""
    key = (version.pk, version.digest)
    with _lock:
        compiled = _cache.get(key)
        if compiled is not None:
            _cache.move_to_end(key)
            return compiled
    compiled = compile_policy(document_of(version))
    with _lock:
        _cache[key] = compiled
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return compiled


def match_argument_of(raw: dict | None) -> MatchArgument | None:
    if not raw:
        return None
    return MatchArgument(name=raw["name"], kind=raw.get("kind", "text"))


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
