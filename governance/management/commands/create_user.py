from django.core.management.base import BaseCommand, CommandError

from governance.errors import ServiceError
from governance.models import Role
from governance.services.orgs import org_get, user_create


class Command(BaseCommand):
    help = "Create a user (or update one) with a membership in an organization."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--org", required=True)
        parser.add_argument("--role", required=True, choices=Role.values)
        parser.add_argument("--password")
        parser.add_argument("--email", default="")
        parser.add_argument("--superuser", action="store_true")

    def handle(self, *args, username, org, role, password, email, superuser, **options):
        try:
            user = user_create(
                username=username,
                org=org_get(org),
                role=role,
                password=password,
                email=email,
                is_superuser=superuser,
            )
        except ServiceError as error:
            raise CommandError(error.detail) from None
        self.stdout.write(f"user {user.username} is {role} in {org}")
        if user.has_usable_password():
            signs_in = "password set" if password else "password unchanged"
            self.stdout.write(f"{signs_in}: {user.username} signs in at /admin/")
        else:
            self.stdout.write(
                f"no password: {user.username} cannot sign in to the portal yet. Run this "
                f"again with --password, or `manage.py changepassword {user.username}` at a "
                f"terminal; for the API alone, a personal key: `manage.py create_api_key "
                f"--org {org} --user {user.username} --name NAME`"
            )
