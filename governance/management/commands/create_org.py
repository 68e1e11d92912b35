from django.core.management.base import BaseCommand, CommandError

from governance.errors import ServiceError
from governance.services.orgs import org_create


class Command(BaseCommand):
    help = "Create an organization."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--name", default="")

    def handle(self, *args, slug, name, **options):
        try:
            org = org_create(slug=slug, name=name)
        except ServiceError as error:
            raise CommandError(error.detail) from None
        self.stdout.write(f"created organization {org.slug}")
