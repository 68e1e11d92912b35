import getpass

from django.core.management.base import BaseCommand, CommandError

from governance import vault


class Command(BaseCommand):
    help = "The vault: status, rotate (re-seal every credential), unseal-check."

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
            passphrase = getpass.getpass("vault passphrase: ")
            if not vault.check_passphrase(passphrase):
                raise CommandError("that passphrase does not unseal the vault")
            self.stdout.write(
                "the passphrase unseals the vault: start the web and worker processes with "
                "FLUIDBOX_VAULT_PASSPHRASE set to it"
            )
