from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from governance.errors import ServiceError
from governance.models import Policy
from governance.policy import PolicyError, lint, run_tests
from governance.policy_store import known_tools
from governance.services.orgs import org_get
from governance.services.policies import parse_policy, policy_save, test_failures

# Saving a policy runs its tests with the organization's tools; a file tested on its own
# does not know them, and an exported policy's shell and path tests then fail.
WITHOUT_ORG = (
    "note: tested without --org, so no tool's match argument is known: every call is matched "
    "as written (shell commands are not split into simple commands, paths are not "
    "normalised). Tests that rely on that fail here but pass when the policy is saved. "
    "Run `manage.py policy test FILE --org SLUG` to use that organization's bundles and "
    "connections, as saving does."
)


class Command(BaseCommand):
    help = "Policies as code: import FILE --org, export NAME --org, test FILE [--org]."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        imp = sub.add_parser("import")
        imp.add_argument("file")
        imp.add_argument("--org", required=True)
        exp = sub.add_parser("export")
        exp.add_argument("name")
        exp.add_argument("--org", required=True)
        test = sub.add_parser("test")
        test.add_argument("file")
        test.add_argument("--org", help="resolve tool kinds and lint against this org's tools")

    def handle(self, *args, action, **options):
        try:
            getattr(self, f"_{action}")(**options)
        except (ServiceError, PolicyError) as error:
            raise CommandError(getattr(error, "detail", str(error))) from None

    def _read(self, file: str) -> str:
        try:
            return Path(file).read_text(encoding="utf-8")
        except OSError as error:
            raise CommandError(f"cannot read {file}: {error}") from None
        except UnicodeDecodeError as error:
            raise CommandError(
                f"cannot read {file}: it is not UTF-8 text (byte {error.start}); "
                "save it as UTF-8 and try again"
            ) from None

    def _import(self, file, org, **_):
        version = policy_save(org=org_get(org), text=self._read(file), author=None, note=file)
        self.stdout.write(
            f"policy {version.policy.name} v{version.number} saved (digest {version.digest[:12]})"
        )

    def _export(self, name, org, **_):
        policy = Policy.objects.filter(org=org_get(org), name=name).select_related(
            "current_version"
        )
        policy = policy.first()
        if policy is None or policy.current_version is None:
            raise CommandError(f"no policy {name!r} in {org}")
        self.stdout.write(policy.current_version.content, ending="")

    def _test(self, file, org=None, **_):
        document = parse_policy(self._read(file))
        if org:
            organization = org_get(org)
            failures = test_failures(document, organization)
            warnings = lint(document, known_tools(organization.pk))
        else:
            failures = [
                f"{f.call}: expected {f.expected}, got {f.got}" for f in run_tests(document, {})
            ]
            warnings = lint(document, {})
        for warning in warnings:
            self.stdout.write(f"warning: rule {warning.rule_number}: {warning.message}")
        for failure in failures:
            self.stderr.write(f"FAIL {failure}")
        total = len(document.tests)
        if failures and not org:
            self.stderr.write(WITHOUT_ORG)
        if failures:
            raise CommandError(f"{len(failures)} of {total} policy test(s) failed")
        self.stdout.write(f"ok: {total} policy test(s) passed")
