"""Django's `createsuperuser`, refusing a username that reads like another account's."""

from django.contrib.auth.management.commands import createsuperuser
from django.db import transaction

from governance.usernames import UsernameError, username_check, usernames_lock


class Command(createsuperuser.Command):
    def _validate_username(self, username, verbose_field_name, database):
        error = super()._validate_username(username, verbose_field_name, database)
        if error:
            return error
        with transaction.atomic(using=database):
            usernames_lock()
            try:
                username_check(username)
            except UsernameError as refused:
                return f"Error: {refused}."
        return None
