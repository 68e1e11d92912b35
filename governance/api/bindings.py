"""The owner's answer to a run that wants to use their personal connection."""

from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from governance.api.fields import ClosedSerializer, query_once
from governance.api.permissions import IsHuman
from governance.models import BindingConsent, FrozenBinding
from governance.selectors import bindings_owned_by
from governance.services.bindings import binding_consent_decide

ANSWERABLE = (BindingConsent.PENDING, BindingConsent.APPROVED, BindingConsent.DENIED)


def binding_json(binding: FrozenBinding) -> dict:
    run = binding.run
    decided_at = binding.consent_decided_at
    return {
        "id": str(binding.pk),
        "connection": binding.connection.slug,
        "consent": binding.consent,
        # False: someone other than the owner gave the connection's credential.
        "credential_from_owner": binding.connection.credential_from_owner,
        "run": {
            "id": str(run.pk),
            "agent": run.agent,
            "status": run.status,
            "created_by": run.created_by or None,
            "invoked_by": run.invoked_by.get_username() if run.invoked_by_id else None,
            "created_at": run.created_at.isoformat().replace("+00:00", "Z"),
        },
        "decided_by": binding.consent_decided_by.get_username()
        if binding.consent_decided_by_id
        else None,
        "decided_at": decided_at.isoformat().replace("+00:00", "Z") if decided_at else None,
    }


BindingOut = inline_serializer(
    "Binding",
    {
        "id": serializers.CharField(),
        "connection": serializers.CharField(),
        "consent": serializers.ChoiceField(ANSWERABLE),
        "credential_from_owner": serializers.BooleanField(),
        "run": serializers.JSONField(),
        "decided_by": serializers.CharField(allow_null=True),
        "decided_at": serializers.CharField(allow_null=True),
    },
)


class BindingListApi(APIView):
    """Runs asking to use (or that used) the caller's personal connections."""

    permission_classes = [IsHuman]

    class QueryIn(serializers.Serializer):
        consent = serializers.ChoiceField(ANSWERABLE, required=False)

    @extend_schema(
        parameters=[OpenApiParameter("consent", str, enum=list(ANSWERABLE))],
        responses=inline_serializer(
            "BindingList", {"bindings": serializers.ListField(child=BindingOut)}
        ),
    )
    def get(self, request):
        query = self.QueryIn(data=query_once(request))
        query.is_valid(raise_exception=True)
        bindings = bindings_owned_by(request.auth)
        if "consent" in query.validated_data:
            bindings = bindings.filter(consent=query.validated_data["consent"])
        return Response({"bindings": [binding_json(b) for b in bindings[:500]]})


class BindingConsentApi(APIView):
    permission_classes = [IsHuman]

    class InputSerializer(ClosedSerializer):
        decision = serializers.ChoiceField(["approve", "deny"])

    @extend_schema(request=InputSerializer, responses=BindingOut)
    def post(self, request, binding_id):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        binding = binding_consent_decide(
            binding_id=binding_id,
            actor=request.auth,
            approve=data.validated_data["decision"] == "approve",
        )
        return Response(binding_json(binding))
