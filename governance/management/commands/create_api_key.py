from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError

from governance.errors import ServiceError
from governance.services.orgs import api_key_create, org_get


class Command(BaseCommand):
    help = "Create an API key and print it once: an operator key, or a personal key with --user."

    def add_arguments(self, parser):
        parser.add_argument("--org", required=True)
        parser.add_argument("--user")
        parser.add_argument("--name", required=True)

    def handle(self, *args, org, user, name, **options):
        try:
            owner = None
            if user:
                owner = User.objects.filter(username=user).first()
                if owner is None:
                    raise CommandError(f"no user {user!r}")
            issued = api_key_create(org=org_get(org), name=name, user=owner)
        except ServiceError as error:
            raise CommandError(error.detail) from None
        self.stdout.write(issued.plaintext)
