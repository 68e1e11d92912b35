from django.urls import path
from drf_spectacular.views import SpectacularAPIView

from governance.api import approvals, budget, connections, mcp, policies, runs, secrets
from ledger import api as ledger_api
from ledger import audit_api

urlpatterns = [
    path("schema", SpectacularAPIView.as_view(), name="schema"),
    path("runs", runs.RunCreateApi.as_view(), name="run-create"),
    path("mcp", mcp.McpEndpointApi.as_view(), name="mcp"),
    path("runs/<str:run_id>", runs.RunDetailApi.as_view(), name="run-detail"),
    path("runs/<str:run_id>/finish", runs.RunFinishApi.as_view(), name="run-finish"),
    path("runs/<str:run_id>/permission", runs.PermissionApi.as_view(), name="run-permission"),
    path(
        "runs/<str:run_id>/budget/reservations",
        budget.ReservationCreateApi.as_view(),
        name="budget-reserve",
    ),
    path(
        "runs/<str:run_id>/budget/reservations/<str:reservation_id>/settle",
        budget.ReservationSettleApi.as_view(),
        name="budget-settle",
    ),
    path("runs/<str:run_id>/events", ledger_api.RunEventsApi.as_view(), name="run-events"),
    path(
        "runs/<str:run_id>/events/stream",
        ledger_api.RunEventStreamApi.as_view(),
        name="run-events-stream",
    ),
    path(
        "runs/<str:run_id>/tools/<str:tool>/call",
        connections.BrokeredCallApi.as_view(),
        name="run-tool-call",
    ),
    path("runs/<str:run_id>/secrets", secrets.RunSecretsApi.as_view(), name="run-secrets"),
    path("connections", connections.ConnectionCreateApi.as_view(), name="connection-create"),
    path(
        "connections/<str:connection_id>",
        connections.ConnectionDetailApi.as_view(),
        name="connection-detail",
    ),
    path(
        "connections/<str:connection_id>/reconnect",
        connections.ConnectionReconnectApi.as_view(),
        name="connection-reconnect",
    ),
    path(
        "connections/<str:connection_id>/revoke",
        connections.ConnectionRevokeApi.as_view(),
        name="connection-revoke",
    ),
    path(
        "connections/<str:connection_id>/tools/refresh",
        connections.ConnectionRefreshApi.as_view(),
        name="connection-refresh",
    ),
    path("approvals", approvals.ApprovalListApi.as_view(), name="approvals"),
    path(
        "approvals/<str:approval_id>/decision",
        approvals.ApprovalDecisionApi.as_view(),
        name="approval-decision",
    ),
    path("policies/<str:name>", policies.PolicyDetailApi.as_view(), name="policy-detail"),
    path(
        "policies/<str:name>/evaluate", policies.PolicyEvaluateApi.as_view(), name="policy-evaluate"
    ),
    path("policies/<str:name>/replay", policies.PolicyReplayApi.as_view(), name="policy-replay"),
    path("ledger/checkpoint", audit_api.CheckpointApi.as_view(), name="ledger-checkpoint"),
    path("ledger/public-key", audit_api.PublicKeyApi.as_view(), name="ledger-public-key"),
    path("ledger/keys", audit_api.KeysApi.as_view(), name="ledger-keys"),
    path(
        "ledger/checkpoints",
        audit_api.CheckpointHistoryApi.as_view(),
        name="ledger-checkpoints",
    ),
    path(
        "ledger/proofs/inclusion",
        audit_api.InclusionProofApi.as_view(),
        name="ledger-inclusion-proof",
    ),
    path(
        "ledger/proofs/consistency",
        audit_api.ConsistencyProofApi.as_view(),
        name="ledger-consistency-proof",
    ),
]
