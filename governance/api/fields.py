"""Input fields shared by several endpoints."""

import copy
import unicodedata
from collections.abc import Mapping

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from governance.schemas import arguments_refusal

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


class StrictCharField(StrictStringMixin, serializers.CharField):
    pass


class ShownCharField(StrictCharField):
    """A name people read (an agent, a repository): no control or format characters (an
    ANSI escape, a line break, a bidi override, a zero-width space), which would make it read
    as something else than it is."""

    default_error_messages = {
        "hidden": "must not contain control or format characters (U+{code:04X} at {index})"
    }

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        for index, char in enumerate(value):
            if unicodedata.category(char) in ("Cc", "Cf"):
                self.fail("hidden", code=ord(char), index=index)
        return value


class ClosedSerializer(serializers.Serializer):
    """A request body whose fields are all declared: a field it does not know (a typo of
    `trust_tier` that was meant to lower the tier) is a 400, not silently left out."""

    def to_internal_value(self, data):
        if isinstance(data, Mapping):
            unknown = sorted(str(key) for key in data if key not in self.fields)
            if unknown:
                raise serializers.ValidationError(
                    {key[:64]: ["unknown field"] for key in unknown[:10]}
                )
        return super().to_internal_value(data)


class StrictURLField(StrictStringMixin, serializers.URLField):
    pass


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer: `"5"`, `5.0` or `true` is refused instead of read as 5 or 1."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class IdField(StrictStringMixin, serializers.CharField):
    def __init__(self, **kwargs):
        super().__init__(max_length=200, allow_blank=False, trim_whitespace=False, **kwargs)


@extend_schema_field(OpenApiTypes.OBJECT)
class ArgumentsField(serializers.JSONField):
    """A JSON object of at most 256 KiB that the database can store as it came."""

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        problem = arguments_refusal(value)
        if problem is not None:
            raise serializers.ValidationError(problem)
        return value


class StrictBooleanField(serializers.BooleanField):
    """JSON `true` or `false` only: `0`, `"yes"` or `"false"` is a mistake, not a boolean."""

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class StrictFloatField(serializers.FloatField):
    """A JSON number: `false` or `"5"` is refused instead of read as 0.0 or 5.0."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        return super().to_internal_value(data)


@extend_schema_field(
    {
        "oneOf": [
            {"type": "boolean"},
            {"type": "string", "enum": ["run", "policy"]},
        ],
        "default": False,
        "description": 'false: approve once. true or "run": also grant this exact call '
        '(same tool, same full arguments) for the rest of the run. "policy": that, and an '
        "exact-match ALWAYS rule for future runs, which sees only tool:match_string (for a "
        "path tool: any content written to this path).",
    }
)
class RememberField(serializers.Field):
    """`false`, `true` (= `"run"`), `"run"` or `"policy"`; anything else is a mistake."""

    default_error_messages = {"invalid": 'must be false, true, "run" or "policy"'}

    def to_internal_value(self, data):
        if data is False:
            return ""
        if data is True:
            return "run"
        if isinstance(data, str) and data in ("run", "policy"):
            return data
        self.fail("invalid")

    def to_representation(self, value):
        return value


class ShallowFieldsSerializer(serializers.Serializer):
    """A serializer whose instances copy the declared fields shallowly.

    DRF deep-copies every declared field for each serializer instance, which re-runs each
    field's `__init__`: for the gate's input, read on every decision, that was more CPU than
    validating the request. A shallow copy is enough for flat input serializers like that
    one: binding sets the name, parent, label and source on the copy itself, and validating
    only reads what the copies share (validators, error messages). Not for serializers whose
    fields are serializers, or that change their fields per instance.
    """

    def get_fields(self):
        return {name: copy.copy(field) for name, field in self._declared_fields.items()}


def query_once(request) -> dict:
    """The query parameters, each given once: `?after=1&after=5` is a 400, never read as
    whichever one `QueryDict.dict()` keeps. A plain dict, not the QueryDict: DRF reads
    `?after=` from a QueryDict as "absent"."""
    repeated = sorted(k for k, v in request.query_params.lists() if len(v) > 1)
    if repeated:
        raise serializers.ValidationError({name: "given more than once" for name in repeated})
    return request.query_params.dict()
