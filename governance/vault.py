"""The vault: two tiers of Fernet sealing.

Tier 1 (infrastructure secrets, e.g. webhook signing secrets) is sealed under the machine
key, from `FLUIDBOX_MACHINE_KEY` or a key file created at first start with mode 0600.

Tier 2 (connection credentials and agent secrets) is sealed under data keys kept in the
database only in wrapped form: wrapped with a key derived (scrypt) from the admin
passphrase `FLUIDBOX_VAULT_PASSPHRASE`. Without a passphrase configured the data keys are
wrapped with the machine key instead (development) and the admin index warns about it.
"""

import base64
import hmac
import json
import os
import secrets
import threading
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt
from django.conf import settings
from django.db import transaction

from governance.errors import Conflict
from ledger.redaction import register_secret

KEYRING = "connections"


class VaultError(Exception):
    """A sealing or unsealing step failed."""


class VaultSealed(VaultError):
    """Tier 2 is sealed: the passphrase is missing or wrong."""


def _machine_keys() -> list[bytes]:
    configured = settings.FLUIDBOX_MACHINE_KEY
    if configured:
        return [key.strip().encode() for key in configured.split(",") if key.strip()]
    path = Path(settings.FLUIDBOX_MACHINE_KEY_FILE)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass  # another process created it first; read theirs
        else:
            with os.fdopen(fd, "wb") as handle:
                handle.write(Fernet.generate_key() + b"\n")
    return [line.strip() for line in path.read_bytes().splitlines() if line.strip()]


def machine_fernet() -> MultiFernet:
    return MultiFernet([Fernet(key) for key in _machine_keys()])


def _passphrase_fernet(passphrase: str, salt: bytes) -> Fernet:
    kdf = Scrypt(salt=salt, length=32, n=2**15, r=8, p=1)
    return Fernet(base64.urlsafe_b64encode(kdf.derive(passphrase.encode("utf-8"))))


def passphrase_configured() -> bool:
    return bool(settings.FLUIDBOX_VAULT_PASSPHRASE)


class _Tier2:
    """Process-wide cache of the unwrapped data keys."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fernet: MultiFernet | None = None
        self._wrapped: str | None = None

    def reset(self) -> None:
        with self._lock:
            self._fernet = None
            self._wrapped = None

    def fernet(self, *, reload: bool = False) -> MultiFernet:
        from governance.models import VaultKeyring

        with self._lock:
            if self._fernet is not None and not reload:
                return self._fernet
            ring = VaultKeyring.objects.filter(name=KEYRING).first()
            if ring is not None and ring.wrapped_keys == self._wrapped and self._fernet is not None:
                return self._fernet
            if ring is None:
                ring = _keyring_create()
            return self._of(ring)

    def locked(self) -> MultiFernet:
        """The keyring's current keys, read under its row lock (`keyring_lock`)."""
        ring = keyring_lock()
        with self._lock:
            if ring.wrapped_keys == self._wrapped and self._fernet is not None:
                return self._fernet
            return self._of(ring)

    def _of(self, ring) -> MultiFernet:
        keys = _unwrap(ring)
        self._fernet = MultiFernet([Fernet(key) for key in keys])
        self._wrapped = ring.wrapped_keys
        return self._fernet


_tier2 = _Tier2()


def keyring_lock():
    """Lock the keyring row until the caller's transaction ends (made first if missing),
    and return it as locked. Sealing and `vault_rotate` both take it first, so a rotation
    is never between reading the sealed rows and dropping the old keys while a secret is
    sealed and stored: the secret is sealed either before the rotation reads its row, or
    under the new key. A transaction that locks rows the rotation re-seals (a connection,
    an agent secret, a signing key) and then seals calls this before locking them, in the
    rotation's order, or the two deadlock."""
    from governance.models import VaultKeyring

    ring = VaultKeyring.objects.select_for_update().filter(name=KEYRING).first()
    if ring is None:
        _keyring_create()
        ring = VaultKeyring.objects.select_for_update().get(name=KEYRING)
    return ring


def _wrapper_for(*, passphrase_protected: bool, salt: bytes):
    if passphrase_protected:
        if not passphrase_configured():
            raise VaultSealed("vault sealed")
        return _passphrase_fernet(settings.FLUIDBOX_VAULT_PASSPHRASE, salt)
    return machine_fernet()


def _unwrap(ring) -> list[bytes]:
    wrapper = _wrapper_for(
        passphrase_protected=ring.passphrase_protected, salt=bytes.fromhex(ring.salt)
    )
    try:
        return [key.encode() for key in json.loads(wrapper.decrypt(ring.wrapped_keys.encode()))]
    except InvalidToken:
        raise VaultSealed("vault sealed") from None


def _wrap(keys: list[bytes], *, passphrase_protected: bool, salt: bytes) -> str:
    wrapper = _wrapper_for(passphrase_protected=passphrase_protected, salt=salt)
    return wrapper.encrypt(json.dumps([key.decode() for key in keys]).encode()).decode()


def _keyring_create():
    from governance.models import VaultKeyring

    salt = secrets.token_bytes(16)
    protected = passphrase_configured()
    wrapped = _wrap([Fernet.generate_key()], passphrase_protected=protected, salt=salt)
    with transaction.atomic():
        ring, _ = VaultKeyring.objects.get_or_create(
            name=KEYRING,
            defaults={
                "wrapped_keys": wrapped,
                "salt": salt.hex(),
                "passphrase_protected": protected,
            },
        )
    return ring


def tier2_status() -> str:
    """`unsealed`, `sealed` or `machine-key` (development fallback), for the admin index."""
    from governance.models import VaultKeyring

    ring = VaultKeyring.objects.filter(name=KEYRING).first()
    return tier2_status_of(None if ring is None else ring.passphrase_protected)


def tier2_status_of(passphrase_protected: bool | None) -> str:
    """`tier2_status` for a keyring row the caller has just read with its own statement:
    its `passphrase_protected`, None when there is no keyring yet."""
    if passphrase_protected is False:
        return "machine-key"
    if passphrase_protected is None and not passphrase_configured():
        return "machine-key"
    try:
        _tier2.fernet()
    except VaultSealed:
        return "sealed"
    return "unsealed"


def seal_secret(plaintext: str) -> str:
    """Seal a connection credential or agent secret (tier 2).

    Always under the keyring's current key, read under its lock (`keyring_lock`): another
    process may have rotated it, or be rotating it now, and a secret sealed under a dropped
    key could never be read again. Call it inside the transaction that stores the result.
    """
    with transaction.atomic():
        return _tier2.locked().encrypt(plaintext.encode("utf-8")).decode()


SEALED_REFUSAL = (
    "vault sealed: nothing can be sealed until the web and worker processes start with the "
    "vault's passphrase (FLUIDBOX_VAULT_PASSPHRASE)"
)


def seal_given(plaintext: str) -> str:
    """`seal_secret` for a secret someone gives now (API, portal): a sealed vault is a 409
    `vault_sealed` they can read, not a 500 (whose DEBUG page prints what they typed)."""
    try:
        return seal_secret(plaintext)
    except VaultSealed:
        raise Conflict(SEALED_REFUSAL, code="vault_sealed") from None


def unseal_secret(token: str) -> str:
    """Plaintext of a tier-2 secret; registered so the redactor masks it everywhere."""
    try:
        plaintext = _tier2.fernet().decrypt(token.encode()).decode("utf-8")
    except InvalidToken:
        # Another process may have rotated the keyring since this one cached it.
        try:
            plaintext = _tier2.fernet(reload=True).decrypt(token.encode()).decode("utf-8")
        except InvalidToken:
            raise VaultError("credential cannot be unsealed with the current keys") from None
    register_secret(plaintext)
    return plaintext


def vouch(statement: str) -> str:
    """A token only this vault can make, saying `statement` (which is no secret: it is not
    registered for masking). `vouches` checks it; rotation re-seals it like the secrets."""
    with transaction.atomic():
        return _tier2.locked().encrypt(statement.encode("utf-8")).decode()


def vouches(token: str, statement: str) -> bool:
    """True when `token` is this vault's `vouch` of exactly `statement`."""
    for reload in (False, True):  # another process may have rotated the keyring
        try:
            said = _tier2.fernet(reload=reload).decrypt(token.encode())
        except InvalidToken:
            continue
        return hmac.compare_digest(said, statement.encode("utf-8"))
    return False


def seal_infrastructure(plaintext: str) -> str:
    return machine_fernet().encrypt(plaintext.encode("utf-8")).decode()


def unseal_infrastructure(token: str) -> str:
    try:
        plaintext = machine_fernet().decrypt(token.encode()).decode("utf-8")
    except InvalidToken:
        raise VaultError("infrastructure secret cannot be unsealed with the machine key") from None
    register_secret(plaintext)
    return plaintext


def keyring_protection() -> str | None:
    """What wraps the data keys: `passphrase`, `machine-key`, or None before the first
    sealed secret creates the keyring. Reads only; never creates it."""
    from governance.models import VaultKeyring

    ring = VaultKeyring.objects.filter(name=KEYRING).first()
    if ring is None:
        return None
    return "passphrase" if ring.passphrase_protected else "machine-key"


def check_passphrase(passphrase: str) -> bool:
    """True when `passphrase` unwraps a passphrase-protected keyring (the unseal check)."""
    from governance.models import VaultKeyring

    ring = VaultKeyring.objects.filter(name=KEYRING).first()
    if ring is None or not ring.passphrase_protected:
        return False
    try:
        _passphrase_fernet(passphrase, bytes.fromhex(ring.salt)).decrypt(ring.wrapped_keys.encode())
    except InvalidToken:
        return False
    return True


def sealed_columns():
    """Every (model, field) that holds tier-2 ciphertext: what rotation re-seals."""
    from governance.models import AgentSecret, Connection
    from ledger.log_models import LogKey

    return [
        (Connection, "credential_sealed"),
        (AgentSecret, "value_sealed"),
        (LogKey, "private_sealed"),  # checkpoint signing keys
        (LogKey, "vouch"),  # that the vault made each of them (not secret, rotated alike)
    ]


def vault_rotate() -> int:
    """Re-seal every tier-2 secret under a new data key; returns how many were re-sealed.

    The new key is added first while the old ones stay readable, every ciphertext is
    rotated, then the old keys are dropped. With a passphrase configured, the new key is
    wrapped under it: this is how a vault begun in development (machine key) comes under a
    passphrase. A vault under a passphrase never goes back to the machine key.

    The keyring's row lock is held throughout (`keyring_lock`): a secret sealed meanwhile
    waits for the new key, so none is stored under a key this drops.
    """
    with transaction.atomic():
        ring = keyring_lock()
        old_keys = _unwrap(ring)
        new_key = Fernet.generate_key()
        salt = bytes.fromhex(ring.salt)
        combined = MultiFernet([Fernet(key) for key in [new_key, *old_keys]])
        count = 0
        for model, field in sealed_columns():
            for row in model.objects.select_for_update().exclude(**{field: ""}):
                rotated = combined.rotate(getattr(row, field).encode()).decode()
                model.objects.filter(pk=row.pk).update(**{field: rotated})
                count += 1
        ring.passphrase_protected = ring.passphrase_protected or passphrase_configured()
        ring.wrapped_keys = _wrap(
            [new_key], passphrase_protected=ring.passphrase_protected, salt=salt
        )
        ring.save(update_fields=["wrapped_keys", "passphrase_protected", "rotated_at"])
    _tier2.reset()
    return count


def reset_cache() -> None:
    _tier2.reset()
