"""Policy dry-run and what-if replay."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from governance.api.fields import ArgumentsField, ToolNameField
from governance.api.permissions import IsOperatorOrHuman
from governance.selectors import org_for_policy_reader
from governance.services.policies import policy_evaluate, policy_replay

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

    class InputSerializer(serializers.Serializer):
        call = serializers.CharField(max_length=70000, required=False, trim_whitespace=False)
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

    class InputSerializer(serializers.Serializer):
        draft = serializers.CharField(max_length=1_000_000, trim_whitespace=False)

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
