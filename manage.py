#!/usr/bin/env python
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fluidbox.settings")
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    # Settings that refuse the environment say why in one sentence; loaded inside Django's
    # command lookup, the sentence came under a traceback that began "KeyError: 'ledger'".
    # Help and the version need no settings, as in Django.
    command = sys.argv[1] if len(sys.argv) > 1 else "help"
    if command not in {"help", "--help", "-h", "version", "--version"}:
        try:
            settings.INSTALLED_APPS  # noqa: B018 (loads the settings)
        except ImproperlyConfigured as error:
            sys.exit(f"manage.py: {error}")
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
