"""What the negotiated protocol version's wire can carry of a listing and of a call's result.

The SDK's server checks every `tools/list` and `tools/call` result against the negotiated
version's own types (`mcp_types.methods.serialize_server_result`) and answers JSON-RPC
-32603 when one does not fit: the whole listing, for one tool. The handshake versions
(2024-11-05 to 2025-11-25) are all checked against 2025-11-25's types, which allow only an
`outputSchema` whose root is `type: "object"` (with `properties` an object, `required` a
list) and only an object as `structuredContent`; 2026-07-28 allows any JSON Schema and any
JSON value. Fields a version does not know are dropped by the SDK itself. So a photograph
taken from a 2026-07-28 upstream can hold what a 2025-era client cannot be sent: such a
field is left out for that client only, asked of the SDK's own types, and the rest of the
definition or result is sent as it is.
"""

from typing import Any

from mcp_types import methods
from pydantic import ValidationError

# What a tool's definition may lose: the fields that describe it (`catalog`), never its
# name or input schema.
DESCRIPTIVE_FIELDS = ("title", "description", "annotations", "outputSchema", "icons")
# A result's envelope fields 2026-07-28 requires (the SDK fills them in after the handler);
# earlier versions ignore them.
_ENVELOPE = {"resultType": "complete", "ttlMs": 0, "cacheScope": "private"}


def _fits(method: str, version: str, result: dict[str, Any]) -> bool:
    try:
        methods.validate_server_result(method, version, {**_ENVELOPE, **result})
    except ValidationError:
        return False
    except (KeyError, ValueError):  # a version or method the SDK has no types for
        return True
    return True


def listable(definitions: list[dict[str, Any]], version: str) -> list[dict[str, Any]]:
    """The tool definitions as `version` can carry them: a descriptive field it cannot is
    left out of that tool; a tool whose name or input schema it cannot is left out."""
    if _fits("tools/list", version, {"tools": definitions}):
        return definitions
    carried = []
    for definition in definitions:
        if _fits("tools/list", version, {"tools": [definition]}):
            carried.append(definition)
            continue
        bare = {key: value for key, value in definition.items() if key not in DESCRIPTIVE_FIELDS}
        if not _fits("tools/list", version, {"tools": [bare]}):
            continue
        for key in DESCRIPTIVE_FIELDS:
            if key in definition and _fits(
                "tools/list", version, {"tools": [{**bare, key: definition[key]}]}
            ):
                bare[key] = definition[key]
        carried.append(bare)
    return carried


def carried_result(result: dict[str, Any], version: str) -> dict[str, Any]:
    """A call's result as `version` can carry it: a `structuredContent` it cannot (a list
    or a string to a 2025-era client) is left out; the content blocks stay."""
    structured = result.get("structuredContent")
    # An object fits every version: the common case is not validated twice (the SDK does).
    if structured is None or isinstance(structured, dict) or _fits("tools/call", version, result):
        return result
    return {key: value for key, value in result.items() if key != "structuredContent"}
