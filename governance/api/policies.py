"""Policy dry-run and what-if replay."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from governance.api.fields import (
    ArgumentsField,
    ClosedSerializer,
    StrictCharField,
    StrictIntegerField,
    ToolNameField,
)
from governance.api.permissions import IsOperatorOrHuman
from governance.selectors import org_for_policy_reader, org_for_policy_writer
from governance.services.policies import (
    policy_evaluate,
    policy_lint_json,
    policy_replay,
    policy_save_named,
)

EvaluationOut = inline_serializer(
    "Evaluation",
    {
        "policy_version": serializers.IntegerField(),
        "verdict": serializers.ChoiceField(["ALWAYS", "ASK", "NEVER"]),
        "rule": serializers.JSONField(allow_null=True),
        "segments": serializers.JSONField(),
        "error": serializers.CharField(allow_null=True),
    },
)


class PolicyEvaluateApi(APIView):
    permission_classes = [IsOperatorOrHuman]

    class InputSerializer(ClosedSerializer):
        call = StrictCharField(max_length=70000, required=False, trim_whitespace=False)
        tool = ToolNameField(required=False)
        arguments = ArgumentsField(required=False)

        def validate(self, attrs):
            if ("call" in attrs) == ("tool" in attrs):
                raise serializers.ValidationError("give either call or tool (+ arguments)")
            return attrs

    @extend_schema(request=InputSerializer, responses=EvaluationOut)
    def post(self, request, name):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        policy = org_for_policy_reader(request.auth, name)
        return Response(policy_evaluate(policy=policy, **data.validated_data))


class PolicyReplayApi(APIView):
    permission_classes = [IsOperatorOrHuman]

    class InputSerializer(ClosedSerializer):
        draft = StrictCharField(max_length=1_000_000, trim_whitespace=False)

    @extend_schema(
        request=InputSerializer,
        responses=inline_serializer(
            "Replay", {"examined": serializers.IntegerField(), "changed": serializers.JSONField()}
        ),
    )
    def post(self, request, name):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        policy = org_for_policy_reader(request.auth, name)
        return Response(policy_replay(policy=policy, draft_text=data.validated_data["draft"]))


VersionOut = inline_serializer(
    "PolicyVersion",
    {
        "name": serializers.CharField(),
        "version": serializers.IntegerField(),
        "digest": serializers.CharField(),
        "yaml": serializers.CharField(),
        "lint": serializers.JSONField(),
    },
)


def version_json(version) -> dict:
    return {
        "name": version.policy.name,
        "version": version.number,
        "digest": version.digest,
        "yaml": version.content,
        "lint": policy_lint_json(version),
    }


class PolicyDetailApi(APIView):
    """Read the current version (admins, auditors, operators) or save a new one (admins,
    operators). A version whose `tests:` fail is not saved."""

    permission_classes = [IsOperatorOrHuman]

    class InputSerializer(ClosedSerializer):
        yaml = StrictCharField(max_length=1_000_000, trim_whitespace=False)
        note = StrictCharField(max_length=200, required=False, default="")
        # The version the draft was made from: a save committed since is a 409
        # `policy_changed`, not silently undone (as in the portal editor).
        base_version = StrictIntegerField(min_value=1, required=False)

    @extend_schema(responses=VersionOut)
    def get(self, request, name):
        policy = org_for_policy_reader(request.auth, name)
        return Response(version_json(policy.current_version))

    @extend_schema(request=InputSerializer, responses={201: VersionOut})
    def put(self, request, name):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        org = org_for_policy_writer(request.auth)
        version = policy_save_named(
            org=org,
            name=name,
            text=data.validated_data["yaml"],
            author=request.auth.user,
            note=data.validated_data["note"],
            base_version=data.validated_data.get("base_version"),
        )
        return Response(version_json(version), status=status.HTTP_201_CREATED)
