"""A GNU getopt_long command line as the program reads it: its operands, the folder `-t` or
`--target-directory` names, and the flags given, short and long.

For the programs whose operands are files they write or link (cp, mv, ln, install, touch,
chmod, uniq, ...): options anywhere until `--`, clusters of short flags (`-rs`), a valued
letter taking the rest of its word or the next one (`-tDIR`, `-t DIR`), long options
abbreviated to any unambiguous start (`--target DIR`, `--sym`).
"""

import re
from dataclasses import dataclass

# Flags whose name starts a valued option's: getopt takes the exact name first (`--strip` is
# no abbreviation of install's `--strip-program`).
# `--version` none of patch's `--version-control`.
_FLAGS_STARTING_A_VALUED = frozenset({"strip", "version"})
_MODE = re.compile(r"[-+=ugoarwxXst0-7,]+")


@dataclass(frozen=True)
class GetoptWords:
    operands: list[str]
    target: str | None  # the value of `-t` / `--target-directory`
    letters: frozenset[str]  # the short flags given
    longs: tuple[str, ...]  # the long flags given, as spelt (`sym` for `--sym`)
    # Every flag in the order given (`-L`, `--no-deref`): where the last of several wins.
    in_order: tuple[str, ...] = ()
    # Each valued option with its value, in order: (`o` or `output`, VALUE).
    values: tuple[tuple[str, str], ...] = ()


def long_option(name: str, valued: tuple[str, ...]) -> str | None:
    """The valued long option `--name` spells (exactly or abbreviated), if any."""
    if name in valued:
        return name
    if name in _FLAGS_STARTING_A_VALUED:
        return None
    matches = [option for option in valued if option.startswith(name)]
    return matches[0] if len(matches) == 1 else None


def read_getopt(
    args: list[str],
    valued: str,
    long_valued: tuple[str, ...],
    *,
    mode_first: bool = False,
    t_names_target: bool = True,
) -> GetoptWords:
    """`mode_first`: chmod's MODE comes first and may look like an option (`chmod -x FILE`);
    `t_names_target` False: `-t` is some other value (touch's `-t STAMP`)."""
    operands: list[str] = []
    target: str | None = None
    letters: set[str] = set()
    longs: list[str] = []
    in_order: list[str] = []
    values: list[tuple[str, str]] = []
    k, options_end = 0, False
    while k < len(args):
        token = args[k]
        a_mode = mode_first and not operands and _MODE.fullmatch(token)
        if a_mode or options_end or not token.startswith("-") or token == "-":
            operands.append(token)
        elif token == "--":
            options_end = True
        elif token.startswith("--"):
            name, has_value, value = token[2:].partition("=")
            option = long_option(name, long_valued)
            if option is None:
                longs.append(name)
                in_order.append(f"--{name}")
            elif not has_value and k + 1 < len(args):
                k += 1
                value = args[k]
            if option is not None:
                values.append((option, value))
            if option == "target-directory":
                target = value
        else:
            for position, letter in enumerate(token[1:], start=1):
                if letter in valued:
                    value = token[position + 1 :]
                    if not value and k + 1 < len(args):
                        k += 1
                        value = args[k]
                    values.append((letter, value))
                    if letter == "t" and t_names_target:
                        target = value
                    break
                letters.add(letter)
                in_order.append(f"-{letter}")
        k += 1
    return GetoptWords(
        operands, target, frozenset(letters), tuple(longs), tuple(in_order), tuple(values)
    )
