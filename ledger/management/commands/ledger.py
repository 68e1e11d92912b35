from django.core.management.base import BaseCommand, CommandError

from ledger.models import Event
from ledger.services import chain_verify


class Command(BaseCommand):
    help = (
        "Ledger tools. `ledger verify RUN_ID` or `ledger verify --all` checks seq and hash chain."
    )

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        verify = sub.add_parser("verify")
        verify.add_argument("run_id", nargs="?")
        verify.add_argument("--all", action="store_true")

    def handle(self, *args, action, run_id=None, all=False, **options):
        if bool(run_id) == bool(all):
            raise CommandError("give a RUN_ID or --all")
        if all:
            run_ids = list(Event.objects.values_list("run_id", flat=True).distinct())
        else:
            run_ids = [run_id]
        broken = 0
        for rid in run_ids:
            try:
                breaks = chain_verify(rid)
            except Exception as error:  # a malformed id, say
                raise CommandError(f"cannot verify {rid}: {error}") from None
            for item in breaks:
                broken += 1
                self.stderr.write(f"run {item.run_id}: broken at seq {item.seq}: {item.problem}")
        if broken:
            raise CommandError(f"{broken} break(s) found in {len(run_ids)} run(s)")
        self.stdout.write(f"ok: {len(run_ids)} run(s) verified")
