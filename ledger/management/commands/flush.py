"""Django's `flush`, with the ledger's append-only triggers suspended while it empties the
tables: only a PostgreSQL superuser (the maintenance role) gets through, never the
application's own role. pytest-django's transactional tests end with a flush."""

from django.core.management.base import CommandError
from django.core.management.commands.flush import Command as DjangoFlush

from ledger.append_only import MaintenanceRefused, append_only_suspended


class Command(DjangoFlush):
    help = DjangoFlush.help + " The ledger is emptied only by a PostgreSQL superuser."

    def handle(self, **options):
        try:
            with append_only_suspended(options["database"]):
                return super().handle(**options)
        except MaintenanceRefused as error:
            raise CommandError(str(error)) from None
