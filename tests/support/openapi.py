"""Checking a live answer against what `/v1/schema` documents for it."""

import copy
from typing import Any

import jsonschema


def response_schema(document: dict, path: str, method: str, status: int) -> dict:
    """The documented body of one response (a `$ref` or an inline schema)."""
    responses = document["paths"][path][method.lower()]["responses"]
    entry = responses.get(str(status)) or responses[f"{str(status)[0]}XX"]
    return entry["content"]["application/json"]["schema"]


def _resolve(schema: dict, document: dict) -> dict:
    while "$ref" in schema:
        name = schema["$ref"].removeprefix("#/components/schemas/")
        schema = document["components"]["schemas"][name]
    return schema


def _as_json_schema(node: Any) -> Any:
    """OpenAPI 3.0's `nullable: true` as JSON Schema's `null` type."""
    if isinstance(node, list):
        return [_as_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: _as_json_schema(value) for key, value in node.items()}
    if node.pop("nullable", False):
        if isinstance(node.get("type"), str):
            node["type"] = [node["type"], "null"]
            if "enum" in node:
                node["enum"] = [*node["enum"], None]
        else:
            node = {"anyOf": [node, {"type": "null"}]}
    return node


def undocumented_keys(instance: Any, schema: dict, document: dict, where: str = "") -> list[str]:
    """Keys the answer has that the schema does not list (where the schema lists any)."""
    schema = _resolve(schema, document)
    for variant in schema.get("allOf", []) + schema.get("oneOf", []) + schema.get("anyOf", []):
        if isinstance(instance, dict) and "properties" in _resolve(variant, document):
            return undocumented_keys(instance, variant, document, where)
    found = []
    if isinstance(instance, dict) and "properties" in schema:
        for key, value in instance.items():
            if key not in schema["properties"]:
                found.append(f"{where}.{key}")
            else:
                found += undocumented_keys(
                    value, schema["properties"][key], document, f"{where}.{key}"
                )
    elif isinstance(instance, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(instance):
            found += undocumented_keys(item, schema["items"], document, f"{where}[{index}]")
    return found


def assert_documented(instance: Any, schema: dict, document: dict) -> None:
    """The answer is valid against its documented schema and has no undocumented key."""
    components = copy.deepcopy(document["components"])
    components["schemas"]["_answer"] = schema
    root = _as_json_schema({"$ref": "#/components/schemas/_answer", "components": components})
    validator = jsonschema.Draft202012Validator(root)
    errors = sorted(validator.iter_errors(instance), key=lambda error: list(error.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]
    assert undocumented_keys(instance, schema, document) == []
