from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from governance.errors import ServiceError
from governance.services.bundles import bundle_import
from governance.services.orgs import org_get


class Command(BaseCommand):
    help = "Capability bundles: import FILE --org SLUG."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        imp = sub.add_parser("import")
        imp.add_argument("file")
        imp.add_argument("--org", required=True)

    def handle(self, *args, action, file, org, **options):
        try:
            text = Path(file).read_text(encoding="utf-8")
        except OSError as error:
            raise CommandError(f"cannot read {file}: {error}") from None
        try:
            bundle = bundle_import(org=org_get(org), text=text)
        except ServiceError as error:
            raise CommandError(error.detail) from None
        self.stdout.write(f"bundle {bundle.name} imported with {bundle.tools.count()} tool(s)")
