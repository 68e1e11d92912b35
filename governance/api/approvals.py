"""The approvals inbox and the decision endpoint, for humans."""

from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from governance.api.fields import ClosedSerializer, RememberField, query_once
from governance.api.permissions import IsHuman
from governance.models import Approval, ApprovalStatus, RememberScope
from governance.policy import escape_invisible
from governance.selectors import approvals_listed
from governance.services.approvals import approval_decide


def approval_json(approval: Approval) -> dict:
    arguments = approval.call.arguments
    return {
        "id": str(approval.pk),
        "status": approval.status,
        "run": str(approval.run_id),
        "agent": approval.run.agent,
        "trust_tier": approval.run.trust_tier,
        "tool": approval.tool,
        "arguments": arguments,
        "call_key": approval.call_key,
        "call_key_escaped": escape_invisible(approval.call_key, layout_is_visible=False),
        "connection": approval.connection.slug if approval.connection_id else None,
        "rule": approval.rule,
        "expires_at": approval.expires_at.isoformat().replace("+00:00", "Z"),
        "decided_by": approval.decided_by.get_username() if approval.decided_by_id else None,
        "remember": approval.remember,
        "remember_scope": approval.remember_scope or None,
    }


ApprovalOut = inline_serializer(
    "Approval",
    {
        "id": serializers.CharField(),
        "status": serializers.CharField(),
        "run": serializers.CharField(),
        "agent": serializers.CharField(),
        "trust_tier": serializers.CharField(),
        "tool": serializers.CharField(),
        "arguments": serializers.JSONField(),
        "call_key": serializers.CharField(),
        "call_key_escaped": serializers.CharField(),
        "connection": serializers.CharField(allow_null=True),
        "rule": serializers.JSONField(allow_null=True),
        "expires_at": serializers.CharField(),
        "decided_by": serializers.CharField(allow_null=True),
        "remember": serializers.BooleanField(),
        "remember_scope": serializers.ChoiceField(["run", "policy"], allow_null=True),
    },
)


LIST_LIMIT = 500


class ApprovalListApi(APIView):
    permission_classes = [IsHuman]

    class QueryIn(serializers.Serializer):
        status = serializers.ChoiceField(ApprovalStatus.values, required=False)

    @extend_schema(
        parameters=[OpenApiParameter("status", str, enum=ApprovalStatus.values)],
        responses=inline_serializer(
            "ApprovalList", {"approvals": serializers.ListField(child=ApprovalOut)}
        ),
    )
    def get(self, request):
        query = self.QueryIn(data=query_once(request))
        query.is_valid(raise_exception=True)
        approvals = approvals_listed(
            request.auth, query.validated_data.get("status"), limit=LIST_LIMIT
        )
        return Response({"approvals": [approval_json(a) for a in approvals]})


class ApprovalDecisionApi(APIView):
    permission_classes = [IsHuman]

    class InputSerializer(ClosedSerializer):
        decision = serializers.ChoiceField(["approve", "deny"])
        remember = RememberField(default=False)

    @extend_schema(
        request=InputSerializer,
        responses=inline_serializer(
            "ApprovalDecided", {"approval": ApprovalOut, "won": serializers.BooleanField()}
        ),
    )
    def post(self, request, approval_id):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        settlement = approval_decide(
            approval_id=approval_id,
            actor=request.auth,
            approve=data.validated_data["decision"] == "approve",
            remember=data.validated_data["remember"] or RememberScope.NONE,
        )
        approval = Approval.objects.select_related("run", "connection", "call", "decided_by").get(
            pk=settlement.approval.pk
        )
        return Response({"approval": approval_json(approval), "won": settlement.won})
