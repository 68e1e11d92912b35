"""The Django admin is the portal: one module per screen, registered on the default site."""

from django.contrib import admin

from governance.admin.site import install

install(admin.site)

from governance.admin import (  # noqa: E402,F401  (registers the screens)
    approvals,
    bundles,
    connections,
    notifications,
    orgs,
    policies,
    runs,
    users,
)
