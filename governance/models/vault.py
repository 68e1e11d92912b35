"""The wrapped data keys of the vault's second tier."""

from django.db import models


class VaultKeyring(models.Model):
    """Connection/agent secret keys, wrapped under the passphrase key (or the machine key)."""

    name = models.CharField(max_length=32, unique=True, default="connections")
    wrapped_keys = models.TextField(help_text="Fernet token over the JSON list of data keys")
    salt = models.CharField(max_length=64)
    passphrase_protected = models.BooleanField()
    rotated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return self.name
