"""Run endpoints: create (freeze), read, finish, and the gate itself."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from governance.api.fields import (
    ArgumentsField,
    ClosedSerializer,
    IdField,
    ShallowFieldsSerializer,
    ShownCharField,
    StrictCharField,
    StrictFloatField,
    StrictIntegerField,
    ToolNameField,
)
from governance.api.permissions import IsOperatorOrHuman, IsRunner, IsRunnerOrOperator
from governance.authentication import ActorKind
from governance.errors import Forbidden, Invalid
from governance.models import Autonomy, Organization, Run, TrustTier
from governance.selectors import access_run
from governance.services.gate import permission_request
from governance.services.runs import run_create, run_finish
from ledger.redaction import redact

SOURCE_KINDS = ("pull_request", "manual", "schedule")


class SourceIn(ClosedSerializer):
    kind = serializers.ChoiceField(SOURCE_KINDS)
    repository = ShownCharField(max_length=300, required=False, allow_null=True)
    head_repository = ShownCharField(max_length=300, required=False, allow_null=True)


class FrozenToolOut(serializers.Serializer):
    name = serializers.CharField()
    access = serializers.CharField()
    secrets = serializers.BooleanField()
    match_argument = serializers.JSONField()
    definition_digest = serializers.CharField()
    callable = serializers.BooleanField()
    guard_error = serializers.CharField()
    schema = serializers.JSONField()
    connection = serializers.CharField(source="connection.slug", default=None, allow_null=True)


def run_json(run: Run) -> dict:
    budget = run.budget
    return {
        "id": str(run.pk),
        "agent": run.agent,
        "status": run.status,
        "autonomy": run.autonomy,
        "trust_tier": run.trust_tier,
        "policy": run.policy_version.policy.name,
        "policy_version": run.policy_version.number,
        "policy_digest": run.policy_version.digest,
        "tool_set_digest": run.tool_set_digest,
        # As run.created recorded it: redacted (a clone URL's token, `https://x:TOKEN@host`,
        # reaches no operator or member reading the run).
        "source": redact(run.source).data,
        "invoked_by": run.invoked_by.get_username() if run.invoked_by_id else None,
        "budget": {
            "allowance": budget.allowance,
            "spent": budget.spent,
            "reserved": budget.outstanding,
            "remaining": budget.remaining,
        },
        "tools": FrozenToolOut(
            run.frozen_tools.select_related("connection").order_by("name"), many=True
        ).data,
        "bindings": [
            {
                "id": str(binding.pk),
                "connection": binding.connection.slug,
                "kind": binding.connection.kind,
                "consent": binding.consent,
            }
            for binding in run.bindings.select_related("connection").order_by("pk")
        ],
        "created_by": run.created_by or None,
        "created_at": run.created_at.isoformat().replace("+00:00", "Z"),
        "finished_at": run.finished_at.isoformat().replace("+00:00", "Z")
        if run.finished_at
        else None,
    }


class BudgetOut(serializers.Serializer):
    allowance = serializers.IntegerField()
    spent = serializers.IntegerField()
    reserved = serializers.IntegerField()
    remaining = serializers.IntegerField()


class RunOut(serializers.Serializer):
    """The run as frozen at creation, and its status (documents `run_json`)."""

    id = serializers.UUIDField()
    agent = serializers.CharField()
    status = serializers.CharField()
    autonomy = serializers.CharField()
    trust_tier = serializers.CharField()
    policy = serializers.CharField()
    policy_version = serializers.IntegerField()
    policy_digest = serializers.CharField()
    tool_set_digest = serializers.CharField()
    source = serializers.JSONField()
    invoked_by = serializers.CharField(allow_null=True)
    budget = BudgetOut()
    tools = FrozenToolOut(many=True)
    bindings = serializers.JSONField()
    created_by = serializers.CharField(allow_null=True)
    created_at = serializers.CharField()
    finished_at = serializers.CharField(allow_null=True)


class RunCreatedOut(RunOut):
    """The created run, and its session token: shown once, only here."""

    session_token = serializers.CharField()


def _org_of_creator(actor) -> Organization:
    """An operator key's org; a person's key's org, or their one org in the portal."""
    if actor.org_id is not None:
        return Organization.objects.get(pk=actor.org_id)
    if actor.kind == ActorKind.PORTAL and len(actor.roles) == 1:
        return Organization.objects.get(pk=next(iter(actor.roles)))
    raise Invalid("use a key scoped to one organization")


class RunCreateApi(APIView):
    """Operators create runs for agents; a person may create their own (then their personal
    connections are bound with their consent already given)."""

    permission_classes = [IsOperatorOrHuman]

    class InputSerializer(ClosedSerializer):
        agent = ShownCharField(max_length=100)
        policy = StrictCharField(max_length=100)
        autonomy = serializers.ChoiceField(Autonomy.values, default=Autonomy.SUPERVISED)
        source = SourceIn()
        invoked_by = StrictCharField(max_length=150, required=False, allow_null=True)
        budget_tokens = StrictIntegerField(min_value=0, max_value=10**12)
        bundles = serializers.ListField(
            child=StrictCharField(max_length=100), default=list, max_length=50
        )
        connections = serializers.ListField(
            child=StrictCharField(max_length=64), default=list, max_length=50
        )
        trust_tier = serializers.ChoiceField(TrustTier.values, required=False, allow_null=True)

    @extend_schema(
        request=InputSerializer,
        responses={201: RunCreatedOut},
    )
    def post(self, request):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        created = run_create(
            org=_org_of_creator(request.auth),
            agent=values["agent"],
            policy_name=values["policy"],
            autonomy=values["autonomy"],
            source=dict(values["source"]),
            budget_tokens=values["budget_tokens"],
            bundles=values["bundles"],
            connections=values["connections"],
            invoked_by=values.get("invoked_by"),
            trust_tier=values.get("trust_tier"),
            created_by=request.auth,
        )
        body = run_json(created.run)
        body["session_token"] = created.session_token
        return Response(body, status=status.HTTP_201_CREATED)


class RunDetailApi(APIView):
    permission_classes = [IsOperatorOrHuman]

    @extend_schema(responses=RunOut)
    def get(self, request, run_id):
        return Response(run_json(access_run(run_id, request.auth)))


class RunFinishApi(APIView):
    permission_classes = [IsRunnerOrOperator]

    @extend_schema(request=None, responses=RunOut)
    def post(self, request, run_id):
        run = access_run(run_id, request.auth)
        run = run_finish(run=run, actor_label=request.auth.label)
        return Response(run_json(run))


GateOut = inline_serializer(
    "GateDecision",
    {
        "decision": serializers.ChoiceField(["allow", "deny", "pending"]),
        "source": serializers.CharField(allow_null=True),
        "reason": serializers.CharField(),
        "rule": serializers.JSONField(allow_null=True),
        "approval": serializers.JSONField(allow_null=True),
        "tool_error": serializers.CharField(allow_null=True),
        "original_verdict": serializers.CharField(allow_null=True),
    },
)


class GateInput(ClosedSerializer, ShallowFieldsSerializer):
    session_id = IdField()
    tool_call_id = IdField()
    arguments = ArgumentsField()
    wait_seconds = StrictFloatField(min_value=0, max_value=30, default=0)


class PermissionApi(APIView):
    permission_classes = [IsRunner]

    class InputSerializer(GateInput):
        tool = ToolNameField()

    @extend_schema(request=InputSerializer, responses=GateOut)
    def post(self, request, run_id):
        run = runner_run(run_id, request.auth)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        answer = permission_request(
            run=run,
            session_id=values["session_id"],
            tool_call_id=values["tool_call_id"],
            tool=values["tool"],
            arguments=values["arguments"],
            wait_seconds=values["wait_seconds"],
        )
        return Response(answer.as_json())


def runner_run(run_id, actor) -> Run:
    run = access_run(run_id, actor)
    if actor.run_id != run.pk:
        raise Forbidden("this token belongs to another run")
    return run
