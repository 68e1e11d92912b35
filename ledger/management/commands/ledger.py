from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from ledger.models import Event, RunCounter
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
        run_ids = self._all_runs() if all else [self._known_run(run_id)]
        broken = 0
        for rid in run_ids:
            for item in chain_verify(rid):
                broken += 1
                self.stderr.write(f"run {item.run_id}: broken at seq {item.seq}: {item.problem}")
        events = Event.objects.filter(run_id__in=run_ids).count()
        if broken:
            raise CommandError(f"{broken} break(s) found in {len(run_ids)} run(s)")
        self.stdout.write(f"ok: {len(run_ids)} run(s), {events} event(s) verified")

    def _all_runs(self) -> list[str]:
        # order_by(): the model's default ordering (run, seq) would otherwise join the
        # DISTINCT and make every event count as a run. A run whose events were all deleted
        # keeps its counter, so counters are read too.
        with_events = Event.objects.order_by().values_list("run_id", flat=True).distinct()
        counted = RunCounter.objects.order_by().values_list("run_id", flat=True)
        return sorted({str(rid) for rid in with_events} | {str(rid) for rid in counted})

    def _known_run(self, run_id: str) -> str:
        try:
            known = (
                RunCounter.objects.filter(run_id=run_id).exists()
                or Event.objects.filter(run_id=run_id).exists()
            )
        except ValidationError:
            raise CommandError(f"{run_id!r} is not a run id") from None
        if not known:
            raise CommandError(f"no run {run_id} in the ledger")
        return run_id
