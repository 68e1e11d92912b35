"""Django's `createsuperuser`, refusing a username that reads like another account's.

The name is checked when it is given (so a prompt can ask again) and once more where the
account is created, in one transaction holding the lock every account creation takes: between
the two, while the operator types a password, an admin may have added a look-alike."""

from django.contrib.auth.management.commands import createsuperuser
from django.core.exceptions import ValidationError
from django.db import transaction

from governance.usernames import UsernameError, username_check, usernames_lock


def _refusal(username: str) -> str | None:
    try:
        username_check(username)
    except UsernameError as refused:
        return str(refused)
    return None


class _CreatingUnderLock:
    """What Django's command reaches as `UserModel._default_manager.db_manager(database)`:
    the manager, but for where it creates the account."""

    def __init__(self, manager, database):
        self._manager = manager.db_manager(database)
        self._database = database

    def __getattr__(self, name):
        return getattr(self._manager, name)

    def create_superuser(self, **user_data):
        username = user_data[self._manager.model.USERNAME_FIELD]
        with transaction.atomic(using=self._database):
            usernames_lock()
            refused = _refusal(username)
            if refused:
                raise ValidationError(f"{refused}.")
            return self._manager.create_superuser(**user_data)


class _ManagerCreatingUnderLock:
    def __init__(self, manager):
        self._manager = manager

    def __getattr__(self, name):
        return getattr(self._manager, name)

    def db_manager(self, database=None, *args, **kwargs):
        return _CreatingUnderLock(self._manager, database)


class _UserModelCreatingUnderLock:
    """The user model as the command sees it (`self.UserModel`)."""

    def __init__(self, model):
        self._model = model
        self._default_manager = _ManagerCreatingUnderLock(model._default_manager)

    def __getattr__(self, name):
        return getattr(self._model, name)

    def __call__(self, *args, **kwargs):
        return self._model(*args, **kwargs)


class Command(createsuperuser.Command):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.UserModel = _UserModelCreatingUnderLock(self.UserModel)

    def _validate_username(self, username, verbose_field_name, database):
        error = super()._validate_username(username, verbose_field_name, database)
        if error:
            return error
        with transaction.atomic(using=database):
            usernames_lock()
            refused = _refusal(username)
        return f"Error: {refused}." if refused else None
