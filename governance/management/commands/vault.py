import getpass
import sys

from django.core.management.base import BaseCommand, CommandError

from governance import vault

NOT_PROTECTED = (
    "no passphrase protects this vault: its data keys are wrapped with the machine key "
    "(the development fallback: FLUIDBOX_VAULT_PASSPHRASE was not set when the first secret "
    "was sealed), so there is nothing to unseal and no passphrase to check"
)
NO_KEYRING = (
    "the vault has no keys yet: they are made when the first credential is sealed, "
    "protected by FLUIDBOX_VAULT_PASSPHRASE if it is set then (otherwise by the machine key)"
)


class Command(BaseCommand):
    help = (
        "The vault: status, rotate (re-seal every credential), unseal-check (asks for the "
        "passphrase, or reads it from standard input when there is no terminal)."
    )

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        sub.add_parser("status")
        sub.add_parser("rotate")
        sub.add_parser("unseal-check")

    def handle(self, *args, action, **options):
        if action == "status":
            self.stdout.write(vault.tier2_status())
        elif action == "rotate":
            try:
                count = vault.vault_rotate()
            except vault.VaultSealed:
                raise CommandError("vault sealed: set FLUIDBOX_VAULT_PASSPHRASE") from None
            self.stdout.write(f"rotated: {count} secret(s) re-sealed under a new key")
        else:
            self._unseal_check()

    def _unseal_check(self) -> None:
        protection = vault.keyring_protection()
        if protection is None:
            raise CommandError(NO_KEYRING)
        if protection == "machine-key":
            raise CommandError(NOT_PROTECTED)
        if not vault.check_passphrase(self._passphrase()):
            raise CommandError("that passphrase does not unseal the vault")
        self.stdout.write(
            "the passphrase unseals the vault: start the web and worker processes with "
            "FLUIDBOX_VAULT_PASSPHRASE set to it"
        )

    def _passphrase(self) -> str:
        if sys.stdin.isatty():
            try:
                passphrase = getpass.getpass("vault passphrase: ")
            except (EOFError, KeyboardInterrupt):
                passphrase = ""
        else:
            # No terminal (a script, CI): the first line of standard input, unechoed anyway.
            passphrase = sys.stdin.readline().rstrip("\r\n")
        if not passphrase:
            raise CommandError(
                "no passphrase given: type it at the prompt, or pipe it on standard input "
                "(e.g. from your secret manager)"
            )
        return passphrase
