"""What drf-spectacular cannot infer: our credentials and our one error shape."""

from django.conf import settings
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import build_bearer_security_scheme_object

ERROR_SCHEMA = {
    "type": "object",
    "description": "Every 4xx answer; some carry extra keys (e.g. `remaining_tokens`).",
    "properties": {
        "error": {"type": "string", "description": "a stable machine-readable code"},
        "detail": {"type": "string", "description": "what went wrong, for a person"},
        "fields": {
            "type": "object",
            "description": "per-field validation messages",
            "additionalProperties": True,
        },
    },
    "required": ["error", "detail"],
    "additionalProperties": True,
}


class FluidboxAutoSchema(AutoSchema):
    def get_serializer_name(self, serializer, direction) -> str:
        # Views nest their `InputSerializer`; without the view's name every request body
        # would be one colliding component called "Input".
        owner, _, name = type(serializer).__qualname__.rpartition(".")
        if owner and "<locals>" not in owner:
            return owner.removesuffix("Api") + name
        return super().get_serializer_name(serializer, direction)


class BearerScheme(OpenApiAuthenticationExtension):
    target_class = "governance.authentication.BearerAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema):
        return {
            **build_bearer_security_scheme_object(
                header_name="Authorization", token_prefix="Bearer"
            ),
            "description": "an API key (`fbx_…`: operator or personal) or a run session "
            "token (`fbr_…`)",
        }


class PortalSessionScheme(OpenApiAuthenticationExtension):
    target_class = "governance.authentication.PortalSessionAuthentication"
    name = "portalSession"

    def get_security_definition(self, auto_schema):
        return {"type": "apiKey", "in": "cookie", "name": settings.SESSION_COOKIE_NAME}


def add_error_responses(result, generator, request, public):
    """A postprocessing hook: every operation may answer 4xx, always in the `Error` shape."""
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    error = {
        "description": "bad input, bad credentials, another org's object, or a conflict",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            operation.setdefault("responses", {}).setdefault("4XX", error)
    return result
