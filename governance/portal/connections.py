"""A connection's page and its actions: create, refresh the photograph, reconnect, revoke.

No page ever holds the credential: the forms take a new one in a password field that is
never rendered back, and the sealed column is read by nothing here.
"""

import shlex

from django import forms
from django.contrib import messages
from django.http import HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse

from governance.admin.roles import portal_actor
from governance.egress import url_credentials_refused
from governance.errors import Invalid, ServiceError
from governance.mcp_wire import tool_digest
from governance.models import (
    Connection,
    ConnectionKind,
    ConnectionStatus,
    CredentialPlacement,
    Organization,
    Role,
    Transport,
)
from governance.portal.pages import page_context
from governance.portal.verbatim import highlighted, url_shown
from governance.services.connections import (
    connection_create,
    connection_reconnect,
    connection_refresh,
    connection_revoke,
    photograph_drift,
)

PLACEMENT_WORDS = {
    CredentialPlacement.HEADER: "an HTTP header",
    CredentialPlacement.ENV: "an environment variable",
}


class CredentialFields(forms.Form):
    credential_placement = forms.ChoiceField(
        label="Credential goes in",
        choices=[
            (CredentialPlacement.HEADER, "an HTTP header"),
            (CredentialPlacement.ENV, "an env variable"),
        ],
    )
    credential_name = forms.CharField(
        label="Header or variable name", max_length=100, initial="Authorization"
    )
    credential_value = forms.CharField(
        label="Credential",
        strip=False,
        max_length=8192,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text="Sealed in the vault at once; never shown again, not even to admins.",
    )

    def credential(self) -> dict | None:
        data = self.cleaned_data
        if not data.get("credential_value"):
            return None
        return {
            data["credential_placement"]: data["credential_name"],
            "value": data["credential_value"],
        }


class ReconnectForm(CredentialFields):
    pass


class ConnectionCreateForm(CredentialFields):
    org = forms.ModelChoiceField(queryset=Organization.objects.none(), label="Organization")
    slug = forms.SlugField(max_length=64, help_text="Its tools are named <slug>.<tool>.")
    kind = forms.ChoiceField(choices=ConnectionKind.choices)
    owner = forms.CharField(
        required=False, max_length=150, help_text="Username; personal connections only."
    )
    transport = forms.ChoiceField(choices=Transport.choices)
    url = forms.URLField(required=False, max_length=500, assume_scheme="https")
    command = forms.CharField(
        required=False,
        max_length=1000,
        help_text="stdio only: the command line, from the deployment's allow-list.",
    )

    field_order = ["org", "slug", "kind", "owner", "transport", "url", "command"]

    def __init__(self, *args, orgs, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["org"].queryset = orgs
        for name in ("credential_placement", "credential_name", "credential_value"):
            self.fields[name].required = False

    def clean_url(self) -> str:
        url = self.cleaned_data["url"]
        try:
            url_credentials_refused(
                url, what="a connection URL", secret_goes="the credential below"
            )
        except Invalid as error:
            raise forms.ValidationError(error.detail) from None
        return url

    def clean_command(self) -> list[str]:
        try:
            return shlex.split(self.cleaned_data.get("command") or "")
        except ValueError as error:
            raise forms.ValidationError(f"Not a command line: {error}") from None


def connection_facts(connection: Connection) -> dict:
    tools = [
        {
            "name": tool.get("name", ""),
            # The server's prose: a bidi override or a look-alike in it is marked, as an
            # agent's words are, so it cannot read to the admin as something else.
            "description": highlighted(str(tool.get("description") or "")),
            "access": "read"
            if (tool.get("annotations") or {}).get("readOnlyHint") is True
            else "write",
            "digest": tool_digest(tool),
        }
        for tool in connection.photograph or []
        if isinstance(tool, dict)
    ]
    return {
        "url": url_shown(connection.url),
        "credential": (
            f"sealed, sent as {PLACEMENT_WORDS[connection.credential_placement]} "
            f"“{connection.credential_name}”"
            if connection.credential_placement
            else "none"
        )
        + (
            "; given by someone other than its owner: every run's use of it waits for the "
            "owner's consent until the owner reconnects it with their own"
            if connection.is_personal
            and connection.credential_placement
            and not connection.credential_from_owner
            else ""
        ),
        "tools": tools,
        "drift": photograph_drift(connection),
        "has_previous": bool(connection.previous_photograph),
    }


def may_manage(actor, connection: Connection) -> dict[str, bool]:
    """Which buttons to show; the services decide again on every POST."""
    user = actor.user
    is_owner = connection.is_personal and connection.owner_id == user.pk
    is_admin = actor.has_role(connection.org_id, Role.ADMIN)
    active = connection.status == ConnectionStatus.ACTIVE
    return {
        "refresh": active and (is_owner or is_admin),
        "revoke": active and (is_owner or is_admin),
        "reconnect": is_owner if connection.is_personal else is_admin,
    }


def connection_page(request, connection: Connection, *, reconnect_form=None, status=200):
    actor = portal_actor(request)
    context = page_context(
        request,
        f"Connection {connection.slug}",
        connection=connection,
        facts=connection_facts(connection),
        can=may_manage(actor, connection),
        reconnect_form=reconnect_form or ReconnectForm(),
        opts=Connection._meta,
    )
    return render(request, "portal/connection.html", context, status=status)


def _redirect(connection: Connection):
    return HttpResponseRedirect(reverse("admin:governance_connection_change", args=[connection.pk]))


def connection_action(request, connection: Connection, action: str):
    actor = portal_actor(request)
    try:
        if action == "refresh":
            connection = connection_refresh(connection=connection, actor=actor)
            drift = photograph_drift(connection)
            messages.success(
                request,
                f"Photographed {len(connection.photograph)} tools. Since the previous "
                f"photograph: {len(drift['added'])} added, {len(drift['withdrawn'])} withdrawn, "
                f"{len(drift['changed'])} changed.",
            )
        elif action == "revoke":
            connection_revoke(connection=connection, actor=actor)
            messages.success(request, "Revoked: every run bound to this connection now refuses.")
        elif action == "reconnect":
            form = ReconnectForm(request.POST)
            if not form.is_valid():
                return connection_page(request, connection, reconnect_form=form, status=400)
            connection = connection_reconnect(
                connection=connection, actor=actor, credential=form.credential()
            )
            messages.success(
                request,
                f"New credential sealed; generation is now {connection.authorization_generation}. "
                "Runs bound to the old generation refuse from now on.",
            )
    except ServiceError as error:
        messages.error(request, f"Refused ({error.status}): {error.detail}")
        connection.refresh_from_db()
        return connection_page(request, connection, status=error.status)
    return _redirect(connection)


def connection_create_view(request, orgs):
    actor = portal_actor(request)
    form = ConnectionCreateForm(
        request.POST or None,
        orgs=orgs,
        initial={"owner": actor.user.get_username(), "transport": Transport.STREAMABLE_HTTP},
    )
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            data = form.cleaned_data
            try:
                connection = connection_create(
                    org=data["org"],
                    actor=actor,
                    slug=data["slug"],
                    kind=data["kind"],
                    transport=data["transport"],
                    owner=data["owner"] if data["kind"] == ConnectionKind.PERSONAL else None,
                    url=data["url"],
                    command=data["command"],
                    credential=form.credential(),
                )
            except ServiceError as error:
                form.add_error(None, f"Refused ({error.status}): {error.detail}")
            else:
                messages.success(
                    request, f"Created {connection.slug}. Refresh it to photograph its tools."
                )
                return _redirect(connection)
    context = page_context(request, "Add a connection", form=form, opts=Connection._meta)
    return render(request, "portal/connection_add.html", context, status=status)
