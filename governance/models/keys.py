"""API keys: operator keys (org-wide) and personal keys (one human), stored hashed."""

import secrets

from django.conf import settings
from django.db import models

from fluidbox.canonical import sha256_hex

from .orgs import Organization

API_KEY_PREFIX = "fbx_"
RUN_TOKEN_PREFIX = "fbr_"


def hash_secret_token(token: str) -> str:
    # Tokens carry 256 bits of randomness, so a fast hash is enough: nothing to brute-force.
    return sha256_hex(token)


def new_secret_token(prefix: str) -> str:
    return prefix + secrets.token_urlsafe(32)


class ApiKey(models.Model):
    """A bearer key scoped to one org; personal when it names a user."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="api_keys")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="api_keys",
    )
    name = models.CharField(max_length=100)
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    hint = models.CharField(max_length=12, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "API key"

    def __str__(self) -> str:
        kind = f"personal ({self.user})" if self.user_id else "operator"
        return f"{self.name} [{kind}] {self.hint}…"

    @property
    def is_personal(self) -> bool:
        return self.user_id is not None
