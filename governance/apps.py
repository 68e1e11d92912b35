from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _ensure_schedules(sender, **kwargs) -> None:
    from governance.tasks import ensure_schedules

    ensure_schedules()


class GovernanceConfig(AppConfig):
    name = "governance"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.contrib import admin

        from governance.admin.changelists import bound_every_change_list
        from governance.observability import metrics, tracing_setup

        # django.contrib.admin is the first app: every admin module is imported by now.
        bound_every_change_list(admin.site)

        post_migrate.connect(_ensure_schedules, sender=self)
        # Before the first request loads the middleware: the Django instrumentation adds its own.
        tracing_setup.configure()
        metrics.initialize()
        _check_allowed_hosts()


def _check_allowed_hosts() -> None:
    """A mistyped FLUIDBOX_CONNECTION_ALLOWED_HOSTS fails at start, not at the first call."""
    from django.core.exceptions import ImproperlyConfigured

    from governance.egress import AllowListError, deployment_allow_list

    try:
        deployment_allow_list()
    except AllowListError as error:
        raise ImproperlyConfigured(f"FLUIDBOX_CONNECTION_ALLOWED_HOSTS: {error}") from None
