"""`python -m ledger.verify BUNDLE --public-key KEY [--public-key KEY…] [--checkpoint FILE…]`

KEY is a verifier key (`name+keyid+base64`) or a file holding one per line (old keys after a
rotation included; what `manage.py ledger public-key --all` prints). FILE is a checkpoint
obtained independently, e.g. from a witness.
Exit status 0 and one line saying what was proved, or 1 and the first bad record.
"""

import argparse
import sys
from pathlib import Path

from .bundle import BundleError, verify_bundle
from .note import NoteError, VerifierKey


def _keys(values: list[str]) -> list[VerifierKey]:
    keys = []
    for value in values:
        path = Path(value)
        lines = path.read_text().splitlines() if "+" not in value and path.exists() else [value]
        for line in lines:
            # One vkey a line; anything after it (`# retired …`) and `#` lines are comments.
            words = line.split()
            if words and not words[0].startswith("#"):
                keys.append(VerifierKey.parse(words[0]))
    return keys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ledger.verify", description=__doc__)
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--public-key", action="append", required=True, metavar="KEY")
    parser.add_argument("--checkpoint", action="append", default=[], type=Path, metavar="FILE")
    args = parser.parse_args(argv)
    try:
        trusted = _keys(args.public_key)
        held = [path.read_text(encoding="utf-8") for path in args.checkpoint]
        with args.bundle.open(encoding="utf-8") as lines:
            verdict = verify_bundle(lines, trusted, held)
    except (NoteError, OSError, UnicodeDecodeError) as error:
        print(f"FAIL: {error}", file=sys.stderr)
        return 2
    except BundleError as error:
        print(f"FAIL: {error}", file=sys.stderr)
        return 1
    print(verdict.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
