"""Input fields shared by several endpoints."""

from rest_framework import serializers

from governance.schemas import MAX_ARGUMENT_BYTES
from ledger.canonical import canonical_json

TOOL_NAME_REGEX = r"^[A-Za-z0-9_.-]{1,128}$"


class StrictStringMixin:
    """Refuse numbers and booleans instead of quietly turning them into strings."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class ToolNameField(StrictStringMixin, serializers.RegexField):
    def __init__(self, **kwargs):
        super().__init__(TOOL_NAME_REGEX, max_length=128, **kwargs)


class IdField(StrictStringMixin, serializers.CharField):
    def __init__(self, **kwargs):
        super().__init__(max_length=200, allow_blank=False, trim_whitespace=False, **kwargs)


class ArgumentsField(serializers.JSONField):
    """A JSON object of at most 256 KiB."""

    default_error_messages = {
        "not_object": "arguments must be a JSON object",
        "too_large": f"arguments exceed {MAX_ARGUMENT_BYTES} bytes",
    }

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if not isinstance(value, dict):
            self.fail("not_object")
        if len(canonical_json(value).encode("utf-8")) > MAX_ARGUMENT_BYTES:
            self.fail("too_large")
        return value


class StrictBooleanField(serializers.BooleanField):
    """JSON `true` or `false` only: `0`, `"yes"` or `"false"` is a mistake, not a boolean."""

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid")
        return data
