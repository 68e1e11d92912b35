"""Connection endpoints and the brokered tool call."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from governance.api.fields import (
    ArgumentsField,
    ClosedSerializer,
    StrictCharField,
    StrictURLField,
    ToolNameField,
)
from governance.api.permissions import IsOperatorOrHuman, IsRunner
from governance.api.runs import GateInput, runner_run
from governance.errors import Invalid
from governance.mcp_wire import tool_digest
from governance.models import Connection, ConnectionKind, Organization, Transport
from governance.selectors import access_connection, visible_connections
from governance.services.broker import broker_call
from governance.services.connections import (
    connection_create,
    connection_reconnect,
    connection_refresh,
    connection_revoke,
    photograph_drift,
)


def _credential_json(connection: Connection) -> dict | None:
    """Where the credential goes, never what it is; for a personal connection, also whether
    its owner gave it (else every run's use of it waits for the owner's consent)."""
    if not connection.credential_sealed:
        return None
    where = {"placement": connection.credential_placement, "name": connection.credential_name}
    if connection.is_personal:
        where["from_owner"] = connection.credential_from_owner
    return where


def connection_json(connection: Connection) -> dict:
    return {
        "id": str(connection.pk),
        "slug": connection.slug,
        "kind": connection.kind,
        "owner": connection.owner.get_username() if connection.owner_id else None,
        "transport": connection.transport,
        "url": connection.url or None,
        "command": connection.command or None,
        "status": connection.status,
        "authorization_generation": connection.authorization_generation,
        "credential": _credential_json(connection),
        "photograph": {
            "digest": connection.photograph_digest or None,
            "taken_at": connection.photographed_at.isoformat().replace("+00:00", "Z")
            if connection.photographed_at
            else None,
            "tools": [
                {"name": tool.get("name"), "digest": tool_digest(tool), "tool": tool}
                for tool in connection.photograph or []
            ],
            "drift": photograph_drift(connection),
        },
    }


ConnectionOut = inline_serializer(
    "Connection",
    {
        "id": serializers.CharField(),
        "slug": serializers.CharField(),
        "kind": serializers.CharField(),
        "owner": serializers.CharField(allow_null=True),
        "transport": serializers.CharField(),
        "url": serializers.CharField(allow_null=True),
        "command": serializers.ListField(child=serializers.CharField(), allow_null=True),
        "status": serializers.CharField(),
        "authorization_generation": serializers.IntegerField(),
        "credential": serializers.JSONField(allow_null=True),
        "photograph": serializers.JSONField(),
    },
)


ConnectionListOut = inline_serializer(
    "ConnectionList", {"connections": serializers.ListField(child=ConnectionOut)}
)


class CredentialIn(ClosedSerializer):
    header = StrictCharField(max_length=100, required=False)
    env = StrictCharField(max_length=100, required=False)
    value = StrictCharField(max_length=8192, trim_whitespace=False)


def _org_for(actor) -> Organization:
    if actor.org_id is not None:
        return Organization.objects.get(pk=actor.org_id)
    if len(actor.roles) == 1:
        return Organization.objects.get(pk=next(iter(actor.roles)))
    raise Invalid("use a key scoped to one organization")


class ConnectionCreateApi(APIView):
    permission_classes = [IsOperatorOrHuman]

    class InputSerializer(ClosedSerializer):
        slug = StrictCharField(max_length=64)
        kind = serializers.ChoiceField(ConnectionKind.values)
        owner = StrictCharField(max_length=150, required=False, allow_null=True)
        transport = serializers.ChoiceField(Transport.values)
        url = StrictURLField(max_length=500, required=False, default="")
        command = serializers.ListField(
            child=StrictCharField(max_length=500), required=False, max_length=50
        )
        credential = CredentialIn(required=False)

    @extend_schema(operation_id="connections_list", responses=ConnectionListOut)
    def get(self, request):
        """The connections this credential may read (each as `GET /v1/connections/{id}`)."""
        listed = visible_connections(request.auth).select_related("owner").order_by("slug", "pk")
        return Response({"connections": [connection_json(c) for c in listed]})

    @extend_schema(request=InputSerializer, responses={201: ConnectionOut})
    def post(self, request):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        if "credential" in values:
            values["credential"] = dict(values["credential"])
        connection = connection_create(org=_org_for(request.auth), actor=request.auth, **values)
        return Response(connection_json(connection), status=status.HTTP_201_CREATED)


class ConnectionDetailApi(APIView):
    permission_classes = [IsOperatorOrHuman]

    @extend_schema(responses=ConnectionOut)
    def get(self, request, connection_id):
        return Response(connection_json(access_connection(connection_id, request.auth)))


class ConnectionReconnectApi(APIView):
    permission_classes = [IsOperatorOrHuman]

    class InputSerializer(ClosedSerializer):
        credential = CredentialIn()

    @extend_schema(request=InputSerializer, responses=ConnectionOut)
    def post(self, request, connection_id):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        connection = connection_reconnect(
            connection=access_connection(connection_id, request.auth),
            actor=request.auth,
            credential=dict(data.validated_data["credential"]),
        )
        return Response(connection_json(connection))


class ConnectionRevokeApi(APIView):
    permission_classes = [IsOperatorOrHuman]

    @extend_schema(request=None, responses=ConnectionOut)
    def post(self, request, connection_id):
        connection = connection_revoke(
            connection=access_connection(connection_id, request.auth), actor=request.auth
        )
        return Response(connection_json(connection))


class ConnectionRefreshApi(APIView):
    permission_classes = [IsOperatorOrHuman]

    @extend_schema(request=None, responses=ConnectionOut)
    def post(self, request, connection_id):
        connection = connection_refresh(
            connection=access_connection(connection_id, request.auth), actor=request.auth
        )
        return Response(connection_json(connection))


class BrokeredCallApi(APIView):
    permission_classes = [IsRunner]

    @extend_schema(
        request=GateInput,
        responses=inline_serializer(
            "BrokeredCall",
            {
                "decision": serializers.CharField(),
                "source": serializers.CharField(allow_null=True),
                "reason": serializers.CharField(),
                "rule": serializers.JSONField(allow_null=True),
                "approval": serializers.JSONField(allow_null=True),
                "tool_error": serializers.CharField(allow_null=True),
                "original_verdict": serializers.CharField(allow_null=True),
                "result": serializers.JSONField(allow_null=True),
                "replayed": serializers.BooleanField(),
                "broker": serializers.JSONField(allow_null=True),
            },
        ),
    )
    def post(self, request, run_id, tool):
        run = runner_run(run_id, request.auth)
        tool = ToolNameField().run_validation(tool)
        data = GateInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        answer = broker_call(
            run=run,
            session_id=values["session_id"],
            tool_call_id=values["tool_call_id"],
            tool=tool,
            arguments=values["arguments"],
            wait_seconds=values["wait_seconds"],
        )
        return Response(answer.as_json())


__all__ = ["ArgumentsField"]
