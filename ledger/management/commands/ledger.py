import signal
import sys
import threading

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from governance.models import Organization, Run
from ledger.chain_checks import break_text, chain_verify, ledger_check, log_orphans
from ledger.log_models import OrgLog
from ledger.models import Event, RunCounter

HELP = """Ledger tools.

  verify (RUN_ID | --all)          check seq and hash chains, each event against its Merkle
                                   leaf, and the leaves against the latest signed checkpoint
  sequence [--seconds S]           give new events their leaves, sign due checkpoints, publish
                                   (what the worker runs; without --seconds: one round)
  checkpoint --org SLUG            sequence now and sign a checkpoint (on demand)
  checkpoints --org SLUG           the history of signed checkpoints and their publication
  public-key --org SLUG [--all]    the verifier key (vkey); --all: retired keys too
  rotate-key --org SLUG            retire the signing key, make a new one
  export (--org SLUG | --run ID) OUT   a bundle for `python -m ledger.verify`
  stream [--poll S] [--once]       deliver every organization's ledger to its audit sinks
                                   until stopped (README "Operating fluidbox")
"""


class Command(BaseCommand):
    help = HELP

    def create_parser(self, prog_name, subcommand, **kwargs):
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.formatter_class = __import__("argparse").RawDescriptionHelpFormatter
        return parser

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        verify = sub.add_parser("verify")
        verify.add_argument("run_id", nargs="?")
        verify.add_argument("--all", action="store_true")
        sequence = sub.add_parser("sequence")
        sequence.add_argument("--seconds", type=float)
        for name in ("checkpoint", "checkpoints", "public-key", "rotate-key"):
            command = sub.add_parser(name)
            command.add_argument("--org", required=True)
            if name == "public-key":
                command.add_argument("--all", action="store_true")
            if name == "checkpoints":
                command.add_argument("--limit", type=int, default=50)
        stream = sub.add_parser("stream")
        stream.add_argument("--poll", type=float, default=0.5, help="seconds between idle checks")
        stream.add_argument("--once", action="store_true", help="one pass, then exit")
        export = sub.add_parser("export")
        scope = export.add_mutually_exclusive_group(required=True)
        scope.add_argument("--org")
        scope.add_argument("--run")
        export.add_argument("out")

    def handle(self, *args, action, **options):
        handler = getattr(self, "_" + action.replace("-", "_"))
        return handler(**options)

    def _org_log(self, slug):
        from ledger.sequencer import log_for_org

        org = Organization.objects.filter(slug=slug).first()
        if org is None:
            raise CommandError(f"no organization {slug!r}")
        return log_for_org(org)

    def _verify(self, run_id=None, all=False, **options):
        if bool(run_id) == bool(all):
            raise CommandError("give a RUN_ID or --all")
        if all:
            done = ledger_check(by="command")
            runs, events, breaks = done.runs, done.events, done.breaks
        else:
            rid = self._known_run(run_id)
            runs, breaks = 1, chain_verify(rid)
            # A deleted event's leaf no longer says which run it was of: any in the run's
            # log fails the check.
            log = OrgLog.objects.filter(org__runs=rid).first()
            breaks += log_orphans(log) if log is not None else []
            events = Event.objects.filter(run_id=rid).count()
        for item in breaks:
            self.stderr.write(break_text(item))
        if breaks:
            raise CommandError(f"{len(breaks)} break(s) found in {runs} run(s)")
        said = f"ok: {runs} run(s), {events} event(s) verified"
        if all:  # one line whatever is signed yet, so scripts and the README can match it
            said += f"; {done.leaves} leaf/leaves hash up to their signed checkpoints"
        self.stdout.write(said)

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

    def _sequence(self, seconds=None, **options):
        from ledger.tasks import sequencer_run, sequencer_tick

        if seconds:
            leaves = sequencer_run(seconds)
            self.stdout.write(f"sequenced {leaves} event(s)")
            return
        done = sequencer_tick()
        self.stdout.write(
            f"sequenced {done['leaves']} event(s), signed {done['checkpoints']} checkpoint(s), "
            f"attempted {done['publications']} publication(s)"
        )

    def _checkpoint(self, org, **options):
        from governance.vault import VaultError
        from ledger.checkpoints import CheckpointRefused, checkpoint_sign, latest_checkpoint
        from ledger.sequencer import sequence_all

        log = self._org_log(org)
        sequence_all()
        log.refresh_from_db()
        try:
            checkpoint = checkpoint_sign(log=log, force=True) or latest_checkpoint(log)
        except (VaultError, CheckpointRefused) as error:
            raise CommandError(str(error)) from None
        self.stdout.write(checkpoint.note, ending="")

    def _checkpoints(self, org, limit=50, **options):
        from ledger.log_models import Checkpoint

        log = self._org_log(org)
        rows = (
            Checkpoint.objects.filter(log=log)
            .select_related("key")
            .prefetch_related("publications")
            .order_by("-tree_size")[:limit]
        )
        self.stdout.write(f"log {log.origin}: {log.size} leaves sequenced")
        for checkpoint in rows:
            published = ", ".join(f"{p.endpoint} {p.status}" for p in checkpoint.publications.all())
            self.stdout.write(
                f"{checkpoint.signed_at.isoformat()}  size {checkpoint.tree_size}  "
                f"root {_b64(checkpoint.root)}  key {checkpoint.key}"
                + (f"  [{published}]" if published else "")
            )

    def _public_key(self, org, all=False, **options):
        from governance.vault import VaultError
        from ledger.checkpoints import active_key, trusted_keys, vkey_of

        log = self._org_log(org)
        try:
            if not all:
                self.stdout.write(vkey_of(active_key(log)))
                return
            trusted, untrusted = trusted_keys(log)
        except VaultError as error:
            raise CommandError(str(error)) from None
        for said in untrusted:
            self.stderr.write(f"left out: {said}")
        for key in trusted:
            state = f"retired {key.retired_at.isoformat()}" if key.retired_at else "current"
            self.stdout.write(f"{vkey_of(key)}  # {state}")

    def _rotate_key(self, org, **options):
        from governance.vault import VaultError
        from ledger.checkpoints import key_rotate, vkey_of

        try:
            key = key_rotate(log=self._org_log(org))
        except VaultError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(vkey_of(key))

    def _export(self, out, org=None, run=None, **options):
        from ledger.export import ExportError, bundle_write
        from ledger.sequencer import log_for_org

        if run is not None:
            found = Run.objects.select_related("org").filter(pk=_uuid(run)).first()
            if found is None:
                raise CommandError(f"no run {run!r}")
            log, run_obj = log_for_org(found.org), found
        else:
            log, run_obj = self._org_log(org), None
        try:
            with _output(out) as handle:
                exported = bundle_write(log=log, out=handle, run=run_obj)
        except ExportError as error:
            raise CommandError(str(error)) from None
        note = ""
        if exported.uncovered:
            note = (
                f"; {exported.uncovered} newer event(s) are not under a checkpoint yet "
                "(`ledger checkpoint` signs one now)"
            )
        self.stderr.write(
            f"exported {exported.events} event(s) under the checkpoint of size "
            f"{exported.tree_size}{note}"
        )

    def _stream(self, poll=0.5, once=False, **options):
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


def _b64(raw) -> str:
    import base64

    return base64.b64encode(bytes(raw)).decode()


def _uuid(value: str):
    import uuid

    try:
        return uuid.UUID(value)
    except ValueError:
        raise CommandError(f"no run {value!r}") from None


class _output:
    def __init__(self, path: str) -> None:
        self.path = path

    def __enter__(self):
        self.handle = sys.stdout if self.path == "-" else open(self.path, "w", encoding="utf-8")
        return self.handle

    def __exit__(self, *exc) -> None:
        if self.handle is not sys.stdout:
            self.handle.close()
