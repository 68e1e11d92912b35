import signal
import threading

from django.core.management.base import BaseCommand, CommandError

from ledger.models import Event
from ledger.services import chain_verify


class Command(BaseCommand):
    help = (
        "Ledger tools. `ledger verify RUN_ID` or `ledger verify --all` checks seq and hash "
        "chain; `ledger stream` delivers the ledger to the organizations' audit sinks."
    )

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        verify = sub.add_parser("verify")
        verify.add_argument("run_id", nargs="?")
        verify.add_argument("--all", action="store_true")
        stream = sub.add_parser("stream", help="deliver to audit sinks until stopped")
        stream.add_argument(
            "--poll", type=float, default=0.5, help="seconds between passes when idle"
        )
        stream.add_argument("--once", action="store_true", help="one pass, then exit")

    def handle(self, *args, action, **options):
        if action == "stream":
            return self.stream(poll=options["poll"], once=options["once"])
        return self.verify(run_id=options.get("run_id"), all=options.get("all", False))

    def verify(self, *, run_id, all):
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

    def stream(self, *, poll: float, once: bool):
        from ledger.streaming import sinks_deliver, stream

        if once:
            sinks_deliver()
            return
        stop = threading.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            # Finish the batch in hand (its cursor then records it), then stop.
            signal.signal(sig, lambda *_: stop.set())
        self.stdout.write("streaming the ledger to audit sinks")
        stream(stop=stop, poll=poll)
        self.stdout.write("stopped")
