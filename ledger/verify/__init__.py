"""Offline verification of a fluidbox ledger bundle: no Django, no database.

    python -m ledger.verify BUNDLE --public-key KEY [--checkpoint FILE] [--run RUN_ID]

Everything here uses the standard library and `cryptography` only, so an auditor can copy
this folder and run it anywhere.
"""

from .bundle import BundleError, Verdict, verify_bundle

__all__ = ["BundleError", "Verdict", "verify_bundle"]
