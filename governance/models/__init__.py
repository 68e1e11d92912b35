from .approvals import Approval, ApprovalStatus, RememberScope, RunGrant
from .budget import BudgetReservation, ReservationStatus, RunBudget, UsageEntry
from .bundles import Access, BundleTool, CapabilityBundle
from .connections import (
    AgentSecret,
    Connection,
    ConnectionKind,
    ConnectionStatus,
    CredentialPlacement,
    Transport,
)
from .keys import API_KEY_PREFIX, RUN_TOKEN_PREFIX, ApiKey, hash_secret_token, new_secret_token
from .notifications import ChannelKind, DeliveryStatus, NotificationChannel, NotificationDelivery
from .orgs import DECIDING_ROLES, Membership, Organization, Role
from .policies import AutonomousFallback, Policy, PolicyVersion
from .runs import Autonomy, FrozenBinding, FrozenTool, Run, RunStatus, TrustTier
from .toolcalls import BrokerStatus, Decision, Source, ToolCall
from .vault import VaultKeyring

__all__ = [
    "API_KEY_PREFIX",
    "DECIDING_ROLES",
    "RUN_TOKEN_PREFIX",
    "Access",
    "AgentSecret",
    "ApiKey",
    "Approval",
    "ApprovalStatus",
    "AutonomousFallback",
    "Autonomy",
    "BrokerStatus",
    "BudgetReservation",
    "BundleTool",
    "CapabilityBundle",
    "ChannelKind",
    "Connection",
    "ConnectionKind",
    "ConnectionStatus",
    "CredentialPlacement",
    "Decision",
    "DeliveryStatus",
    "FrozenBinding",
    "FrozenTool",
    "Membership",
    "NotificationChannel",
    "NotificationDelivery",
    "Organization",
    "Policy",
    "PolicyVersion",
    "ReservationStatus",
    "Role",
    "Run",
    "RunBudget",
    "RememberScope",
    "RunGrant",
    "RunStatus",
    "Source",
    "ToolCall",
    "Transport",
    "TrustTier",
    "UsageEntry",
    "VaultKeyring",
    "hash_secret_token",
    "new_secret_token",
]
