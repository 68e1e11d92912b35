"""The auditor's endpoints: the latest signed checkpoint, the verifier key, the history of
checkpoints and keys, and inclusion and consistency proofs. Operators (their organization)
and people with the admin or auditor role; another organization's log is a 404."""

import base64

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import renderers, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from governance.api.fields import query_once
from governance.api.permissions import IsOperatorOrHuman
from governance.authentication import Actor, ActorKind
from governance.errors import Conflict, Invalid, NotFound, ServiceError
from governance.models import Organization, Role
from governance.selectors import access_run
from governance.vault import VaultError
from ledger.chain_checks import leaf_of_event_hash
from ledger.checkpoints import (
    UntrustedKey,
    active_key,
    latest_checkpoint,
    trusted_keys,
    vkey_of,
)
from ledger.log_models import Checkpoint, OrgLog
from ledger.models import Event
from ledger.sequencer import log_for_org
from ledger.services import event_hash
from ledger.tree import TreeReader, TreeStorageError
from ledger.verify.merkle import ProofError, verify_consistency, verify_inclusion

LEDGER_ROLES = (Role.ADMIN, Role.AUDITOR)
MAX_PAGE = 200


class VaultUnavailable(ServiceError):
    status = 503
    code = "vault_sealed"


class KeyUntrusted(ServiceError):
    status = 409
    code = "key_untrusted"


def _b64(raw) -> str:
    return base64.b64encode(bytes(raw)).decode("ascii")


def access_ledger_log(actor: Actor, org_slug: str | None) -> OrgLog:
    """The log of the caller's organization: an operator key's, or the one org (or the
    `?org=` one) where a person is an admin or auditor."""
    if actor.kind == ActorKind.OPERATOR:
        org = Organization.objects.get(pk=actor.org_id)
        if org_slug and org_slug != org.slug:
            raise NotFound("no such organization")
        return log_for_org(org)
    allowed = [org_id for org_id, role in actor.roles.items() if role in LEDGER_ROLES]
    orgs = Organization.objects.filter(pk__in=allowed)
    if org_slug:
        org = orgs.filter(slug=org_slug).first()
        if org is None:
            raise NotFound("no such organization")
        return log_for_org(org)
    found = list(orgs[:2])
    if not found:
        raise NotFound("no organization whose ledger you may read")
    if len(found) > 1:
        raise Invalid("you read the ledgers of several organizations: give ?org=SLUG")
    return log_for_org(found[0])


def _checkpoint_of_size(log: OrgLog, size: int | None) -> Checkpoint:
    if size is None:
        checkpoint = latest_checkpoint(log)
        if checkpoint is None:
            raise NotFound("no checkpoint has been signed for this log yet", code="no_checkpoint")
        return checkpoint
    checkpoint = Checkpoint.objects.filter(log=log, tree_size=size).first()
    if checkpoint is None:
        raise NotFound(f"no checkpoint of tree size {size}", code="no_checkpoint")
    return checkpoint


class OrgQuery(serializers.Serializer):
    org = serializers.SlugField(required=False, help_text="people in several organizations")


class PlainTextRenderer(renderers.BaseRenderer):
    media_type = "text/plain"
    format = "txt"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return data.encode("utf-8") if isinstance(data, str) else data


class CheckpointApi(APIView):
    """The latest signed checkpoint: a C2SP tlog-checkpoint signed note, as text/plain."""

    permission_classes = [IsOperatorOrHuman]
    renderer_classes = [PlainTextRenderer, renderers.JSONRenderer]

    @extend_schema(parameters=[OrgQuery], responses={(200, "text/plain"): OpenApiTypes.STR})
    def get(self, request):
        query = OrgQuery(data=query_once(request))
        query.is_valid(raise_exception=True)
        log = access_ledger_log(request.auth, query.validated_data.get("org"))
        checkpoint = _checkpoint_of_size(log, None)
        response = HttpResponse(checkpoint.note, content_type="text/plain; charset=utf-8")
        response["Cache-Control"] = "no-cache, max-age=0"
        return response

    def handle_exception(self, exc):
        # Errors stay our JSON shape even for a client that asked for text/plain.
        self.request.accepted_renderer = renderers.JSONRenderer()
        self.request.accepted_media_type = renderers.JSONRenderer.media_type
        return super().handle_exception(exc)


class PublicKeyApi(APIView):
    """The current checkpoint verifier key, in the signed-note vkey format."""

    permission_classes = [IsOperatorOrHuman]

    @extend_schema(
        parameters=[OrgQuery],
        responses=inline_serializer("LedgerPublicKey", {"vkey": serializers.CharField()}),
    )
    def get(self, request):
        query = OrgQuery(data=query_once(request))
        query.is_valid(raise_exception=True)
        log = access_ledger_log(request.auth, query.validated_data.get("org"))
        try:
            key = active_key(log)
        except UntrustedKey as error:
            raise KeyUntrusted(f"{error}: nothing is signed with it") from None
        except VaultError as error:
            raise VaultUnavailable(f"the signing key cannot be made: {error}") from None
        return Response({"vkey": vkey_of(key)})


class KeyOut(serializers.Serializer):
    vkey = serializers.CharField()
    key_id = serializers.CharField()
    created_at = serializers.DateTimeField()
    retired_at = serializers.DateTimeField(allow_null=True)


class KeysApi(APIView):
    """Every key that ever signed this log's checkpoints, retired ones included: those this
    vault made (a key row added past fluidbox is never handed out)."""

    permission_classes = [IsOperatorOrHuman]

    @extend_schema(
        parameters=[OrgQuery],
        responses=inline_serializer("LedgerKeys", {"keys": KeyOut(many=True)}),
    )
    def get(self, request):
        query = OrgQuery(data=query_once(request))
        query.is_valid(raise_exception=True)
        log = access_ledger_log(request.auth, query.validated_data.get("org"))
        try:
            trusted, _ = trusted_keys(log)
        except VaultError as error:
            raise VaultUnavailable(f"the log's keys cannot be checked: {error}") from None
        keys = [
            {
                "vkey": vkey_of(key),
                "key_id": f"{key.key_id:08x}",
                "created_at": key.created_at,
                "retired_at": key.retired_at,
            }
            for key in trusted
        ]
        return Response({"keys": KeyOut(keys, many=True).data})


class PublicationOut(serializers.Serializer):
    endpoint = serializers.CharField()
    status = serializers.CharField()
    attempts = serializers.IntegerField()
    published_at = serializers.DateTimeField(allow_null=True)
    cosignature = serializers.CharField(allow_blank=True)
    last_error = serializers.CharField(allow_blank=True)


class CheckpointOut(serializers.Serializer):
    tree_size = serializers.IntegerField()
    root_hash = serializers.CharField(help_text="base64")
    key_id = serializers.CharField()
    signed_at = serializers.DateTimeField()
    note = serializers.CharField(help_text="the signed note")
    publications = PublicationOut(many=True)


class CheckpointHistoryApi(APIView):
    """Signed checkpoints, newest first, with where each was published."""

    permission_classes = [IsOperatorOrHuman]

    class QueryIn(OrgQuery):
        before = serializers.IntegerField(min_value=1, required=False, help_text="tree size")
        limit = serializers.IntegerField(min_value=1, max_value=MAX_PAGE, default=50)

    @extend_schema(
        parameters=[QueryIn],
        responses=inline_serializer(
            "LedgerCheckpointHistory",
            {"origin": serializers.CharField(), "checkpoints": CheckpointOut(many=True)},
        ),
    )
    def get(self, request):
        query = self.QueryIn(data=query_once(request))
        query.is_valid(raise_exception=True)
        log = access_ledger_log(request.auth, query.validated_data.get("org"))
        rows = Checkpoint.objects.filter(log=log).select_related("key")
        if "before" in query.validated_data:
            rows = rows.filter(tree_size__lt=query.validated_data["before"])
        rows = rows.prefetch_related("publications").order_by("-tree_size")[
            : query.validated_data["limit"]
        ]
        checkpoints = [
            {
                "tree_size": checkpoint.tree_size,
                "root_hash": _b64(checkpoint.root),
                "key_id": f"{checkpoint.key.key_id:08x}",
                "signed_at": checkpoint.signed_at,
                "note": checkpoint.note,
                "publications": [
                    {
                        "endpoint": p.endpoint,
                        "status": p.status,
                        "attempts": p.attempts,
                        "published_at": p.published_at,
                        "cosignature": p.cosignature,
                        "last_error": p.last_error,
                    }
                    for p in checkpoint.publications.all()
                ],
            }
            for checkpoint in rows
        ]
        return Response(
            {"origin": log.origin, "checkpoints": CheckpointOut(checkpoints, many=True).data}
        )


def tlog_proof(index: int, path: list[bytes], note: str) -> str:
    """The proof as c2sp.org/tlog-proof@v1 text: index, audit path, then the checkpoint."""
    lines = ["c2sp.org/tlog-proof@v1", f"index {index}", *(_b64(h) for h in path)]
    return "\n".join(lines) + "\n\n" + note


class InclusionProofApi(APIView):
    """An event (run and seq) is leaf N of the log, proved against a signed checkpoint."""

    permission_classes = [IsOperatorOrHuman]

    class QueryIn(serializers.Serializer):
        run = serializers.UUIDField()
        seq = serializers.IntegerField(min_value=1, max_value=2**62)
        tree_size = serializers.IntegerField(
            min_value=1, max_value=2**62, required=False, help_text="default: the latest"
        )

    @extend_schema(
        parameters=[QueryIn],
        responses=inline_serializer(
            "InclusionProof",
            {
                "run": serializers.CharField(),
                "seq": serializers.IntegerField(),
                "event_hash": serializers.CharField(help_text="hex: the leaf's data"),
                "leaf_index": serializers.IntegerField(),
                "leaf_hash": serializers.CharField(help_text="base64 SHA-256(0x00 || data)"),
                "tree_size": serializers.IntegerField(),
                "root_hash": serializers.CharField(help_text="base64"),
                "inclusion_path": serializers.ListField(child=serializers.CharField()),
                "checkpoint": serializers.CharField(help_text="the signed note"),
                "tlog_proof": serializers.CharField(help_text="c2sp.org/tlog-proof@v1"),
            },
        ),
    )
    def get(self, request):
        query = self.QueryIn(data=query_once(request))
        query.is_valid(raise_exception=True)
        run = access_run(query.validated_data["run"], request.auth)
        if request.auth.is_human and not request.auth.has_role(run.org_id, *LEDGER_ROLES):
            raise NotFound("no such run")
        event = Event.objects.filter(run=run, seq=query.validated_data["seq"]).first()
        if event is None:
            raise NotFound("no such event")
        log = log_for_org(run.org)
        checkpoint = _checkpoint_of_size(log, query.validated_data.get("tree_size"))
        tree = TreeReader(log, checkpoint.tree_size)
        leaf = tree.leaf_of_event(event.pk)
        if leaf is None or leaf[0] >= checkpoint.tree_size:
            raise _not_checkpointed()
        leaf_index, leaf_hash = leaf
        path = _checked_inclusion(event, tree, leaf_index, leaf_hash, checkpoint)
        return Response(
            {
                "run": str(run.pk),
                "seq": event.seq,
                "event_hash": event.hash,
                "leaf_index": leaf_index,
                "leaf_hash": _b64(leaf_hash),
                "tree_size": checkpoint.tree_size,
                "root_hash": _b64(checkpoint.root),
                "inclusion_path": [_b64(h) for h in path],
                "checkpoint": checkpoint.note,
                "tlog_proof": tlog_proof(leaf_index, path, checkpoint.note),
            }
        )


def _checked_inclusion(event: Event, tree: TreeReader, index: int, leaf: bytes, checkpoint):
    """The leaf's audit path, once the event, its leaf and the path agree with each other
    and with the signed root: a 409 naming the disagreement otherwise, never a proof of
    something other than the event shown."""
    recomputed = event_hash(
        prev_hash=event.prev_hash,
        run_id=event.run_id,
        seq=event.seq,
        type=event.type,
        at=event.at,
        data=event.data,
    )
    if recomputed != event.hash:
        raise _tampered("the event's content does not hash to its hash", "event_altered")
    if leaf != leaf_of_event_hash(event.hash):
        raise _tampered(
            f"the event's hash is not the one its Merkle leaf {index} holds", "leaf_mismatch"
        )
    try:
        path = tree.inclusion(index)
        verify_inclusion(leaf, index, checkpoint.tree_size, path, bytes(checkpoint.root))
    except (TreeStorageError, ProofError) as error:
        raise _tampered(
            f"leaf {index} does not prove into the checkpoint of size "
            f"{checkpoint.tree_size}: {error}",
            "proof_mismatch",
        ) from None
    return path


def _tampered(problem: str, code: str) -> Conflict:
    return Conflict(
        f"{problem}: the stored ledger was altered, so no proof is given. "
        "Run `manage.py ledger verify --all`.",
        code=code,
    )


def _not_checkpointed() -> Conflict:
    return Conflict(
        "this event is not under that checkpoint yet: the worker signs one within a minute, "
        "or run `manage.py ledger checkpoint`",
        code="not_checkpointed",
    )


class ConsistencyProofApi(APIView):
    """The log at `second` extends the log at `first`: both are signed checkpoint sizes."""

    permission_classes = [IsOperatorOrHuman]

    class QueryIn(OrgQuery):
        first = serializers.IntegerField(min_value=1, max_value=2**62)
        second = serializers.IntegerField(
            min_value=1, max_value=2**62, required=False, help_text="default: the latest"
        )

    @extend_schema(
        parameters=[QueryIn],
        responses=inline_serializer(
            "ConsistencyProof",
            {
                "first": serializers.IntegerField(),
                "second": serializers.IntegerField(),
                "consistency_path": serializers.ListField(child=serializers.CharField()),
                "first_checkpoint": serializers.CharField(),
                "second_checkpoint": serializers.CharField(),
            },
        ),
    )
    def get(self, request):
        query = self.QueryIn(data=query_once(request))
        query.is_valid(raise_exception=True)
        log = access_ledger_log(request.auth, query.validated_data.get("org"))
        first = _checkpoint_of_size(log, query.validated_data["first"])
        second = _checkpoint_of_size(log, query.validated_data.get("second"))
        if first.tree_size > second.tree_size:
            raise Invalid("first must not be larger than second")
        try:
            path = TreeReader(log, second.tree_size).consistency(first.tree_size)
            verify_consistency(
                first.tree_size, second.tree_size, path, bytes(first.root), bytes(second.root)
            )
        except (TreeStorageError, ProofError) as error:
            raise _tampered(
                f"the stored tree does not prove the checkpoint of size {second.tree_size} "
                f"consistent with the one of size {first.tree_size}: {error}",
                "proof_mismatch",
            ) from None
        return Response(
            {
                "first": first.tree_size,
                "second": second.tree_size,
                "consistency_path": [_b64(h) for h in path],
                "first_checkpoint": first.note,
                "second_checkpoint": second.note,
            }
        )
