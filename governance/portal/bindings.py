"""The owner's page for runs that ask to use their personal connections: approve or refuse.

Consent goes through `binding_consent_decide`, which admits the owner only: a superuser who
opens this page sees their own connections' requests, never someone else's.
"""

from django.contrib import messages
from django.http import HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from governance.admin.roles import portal_actor
from governance.errors import ServiceError
from governance.models import BindingConsent
from governance.portal.pages import page_context
from governance.selectors import bindings_owned_by
from governance.services.bindings import binding_consent_decide

RECENT = 15


@require_GET
def bindings_view(request):
    owned = bindings_owned_by(portal_actor(request))
    context = page_context(
        request,
        "Runs asking to use your personal connections",
        pending=list(owned.filter(consent=BindingConsent.PENDING)[:200]),
        recent=list(owned.exclude(consent=BindingConsent.PENDING)[:RECENT]),
    )
    return render(request, "portal/bindings.html", context)


@require_POST
def binding_decide_view(request, binding_id: int):
    choice = request.POST.get("decision", "")
    if choice not in ("approve", "deny"):
        messages.error(request, "Choose approve or deny.")
    else:
        try:
            binding = binding_consent_decide(
                binding_id=binding_id, actor=portal_actor(request), approve=choice == "approve"
            )
        except ServiceError as error:
            messages.error(request, f"Refused ({error.status}): {error.detail}")
        else:
            verb = "Approved" if choice == "approve" else "Refused"
            messages.success(
                request, f"{verb}: run {binding.run_id} using {binding.connection.slug}."
            )
    return HttpResponseRedirect(reverse("admin:inbox-bindings"))
