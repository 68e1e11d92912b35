"""`python -m ledger.verify BUNDLE --public-key KEY [--public-key KEY…] [--checkpoint FILE…]
[--run RUN_ID]`

KEY is a verifier key (`name+keyid+base64`) or a file holding one per line (old keys after a
rotation included; what `manage.py ledger public-key --all` prints). FILE is a checkpoint
obtained independently, e.g. from a witness. RUN_ID is the run you expect: a run bundle must
be that run's, an organization bundle must hold events of it.
Exit status 0 and one line saying what was proved; 1 and the first bad record; 2 when a key
or file cannot be read; 3 and one line when a run bundle does not show its run finished, or
not the records of the calls its finish left in flight (every event in it holds, but later
ones may have been left out).
"""

import argparse
import sys
from pathlib import Path

from .bundle import BundleError, verify_bundle
from .note import NoteError, VerifierKey

INCOMPLETE = 3


class _Unreadable(Exception):
    """A file named on the command line cannot be read."""


def _read(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise _Unreadable(f"{what} {path}: no such file") from None
    except UnicodeDecodeError:
        raise _Unreadable(f"{what} {path}: not UTF-8 text") from None
    except OSError as error:
        raise _Unreadable(f"{what} {path}: {error.strerror or error}") from None


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:  # a name too long for a file: a key, then
        return False


def _keys(values: list[str]) -> list[VerifierKey]:
    keys = []
    for value in values:
        path = Path(value)
        if _is_file(path) or "+" not in value:
            # Not a key: a file of keys, which must exist.
            lines = _read(path, "--public-key").splitlines()
            where = f"--public-key {value}"
        else:
            lines, where = [value], "--public-key"
        found = 0
        for number, line in enumerate(lines, start=1):
            # One vkey a line; anything after it (`# retired …`) and `#` lines are comments.
            words = line.split()
            if words and not words[0].startswith("#"):
                try:
                    keys.append(VerifierKey.parse(words[0]))
                except NoteError as error:
                    at = f" line {number}" if where != "--public-key" else ""
                    raise NoteError(f"{where}{at}: {error}") from None
                found += 1
        if not found:
            raise NoteError(f"{where}: no verifier key in it")
    return keys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ledger.verify", description=__doc__)
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--public-key", action="append", required=True, metavar="KEY")
    parser.add_argument("--checkpoint", action="append", default=[], type=Path, metavar="FILE")
    parser.add_argument("--run", metavar="RUN_ID", help="the run the bundle must show")
    args = parser.parse_args(argv)
    try:
        trusted = _keys(args.public_key)
        held = [_read(path, "--checkpoint") for path in args.checkpoint]
        try:
            lines = args.bundle.open("rb")
        except OSError as error:
            raise _Unreadable(f"{args.bundle}: {error.strerror or error}") from None
        with lines:
            verdict = verify_bundle(lines, trusted, held, run=args.run)
    except (NoteError, _Unreadable) as error:
        print(f"FAIL: {error}", file=sys.stderr)
        return 2
    except BundleError as error:
        print(f"FAIL: {error}", file=sys.stderr)
        return 1
    except OSError as error:  # the bundle could not be read to its end
        print(f"FAIL: {args.bundle}: {error.strerror or error}", file=sys.stderr)
        return 2
    print(verdict.summary())
    return 0 if verdict.complete else INCOMPLETE


if __name__ == "__main__":
    sys.exit(main())
