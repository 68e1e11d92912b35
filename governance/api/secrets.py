"""Secrets at the boundary: a run gets only what its frozen `secrets: true` tools declare."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from governance.api.fields import IdField, ToolNameField, query_once
from governance.api.permissions import IsRunner
from governance.api.runs import runner_run
from governance.services.agent_secrets import secrets_for_tool


class RunSecretsApi(APIView):
    permission_classes = [IsRunner]

    class QueryIn(serializers.Serializer):
        tool = ToolNameField()
        session_id = IdField()
        tool_call_id = IdField()

    @extend_schema(
        parameters=[QueryIn],
        responses=inline_serializer("RunSecrets", {"env": serializers.DictField()}),
    )
    def get(self, request, run_id):
        run = runner_run(run_id, request.auth)
        query = self.QueryIn(data=query_once(request))
        query.is_valid(raise_exception=True)
        env = secrets_for_tool(run=run, **query.validated_data)
        response = Response({"env": env})
        response["Cache-Control"] = "no-store"
        return response
