"""The owner's consent to a run's binding of their personal connection: asked once, decided
once, by the owner only, with its ledger record in the same transaction."""

from django.db import transaction
from django.utils import timezone

from governance.authentication import Actor
from governance.errors import Conflict
from governance.models import BindingConsent, FrozenBinding, Run, RunStatus
from governance.selectors import access_binding_for_owner
from ledger.models import EventType
from ledger.redaction import redact
from ledger.services import chain_lock, event_append


@transaction.atomic
def binding_consent_decide(*, binding_id, actor: Actor, approve: bool) -> FrozenBinding:
    """Approve or refuse a run's use of the actor's own personal connection.

    Only the connection's owner decides, for approve and refuse alike: no admin, superuser
    or operator answers for them (the same rule as approvals of their calls). A compare-
    and-swap from pending: a second answer changes nothing and is told what was decided.
    """
    binding = access_binding_for_owner(binding_id, actor)
    # The run's counter before the binding row and the run's status are read (see
    # chain_lock): a finish commits `run.finished` under the same lock, so a consent that
    # waited for it sees the run finished and records nothing after it.
    chain_lock(run_id=binding.run_id)
    if not Run.objects.filter(pk=binding.run_id, status=RunStatus.ACTIVE).exists():
        raise Conflict("this run has finished", code="run_finished")
    decided = BindingConsent.APPROVED if approve else BindingConsent.DENIED
    won = FrozenBinding.objects.filter(pk=binding.pk, consent=BindingConsent.PENDING).update(
        consent=decided, consent_decided_by=actor.user, consent_decided_at=timezone.now()
    )
    binding.refresh_from_db()
    if not won:
        raise Conflict(
            f"this binding was already answered: {binding.consent}",
            code="already_decided",
            extra={"consent": binding.consent},
        )
    event_append(
        run_id=binding.run_id,
        type=EventType.BINDING_DECIDED,
        redacted=redact(
            {
                "binding_id": binding.pk,
                "connection": binding.connection.slug,
                "consent": decided,
                "decided_by": actor.user.get_username(),
            }
        ),
    )
    return binding
