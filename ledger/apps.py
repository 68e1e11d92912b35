from django.apps import AppConfig
from django.db.backends.signals import connection_created
from django.db.models.signals import post_migrate


class LedgerConfig(AppConfig):
    name = "ledger"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from ledger.append_only import install_after_migrate, register_sqlite_function

        connection_created.connect(register_sqlite_function)
        post_migrate.connect(install_after_migrate, sender=self)
