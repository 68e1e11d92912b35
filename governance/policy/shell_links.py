"""What a link a command creates opens to writing: the files it points at.

A link is a door: once `c -> /workspace/.git/config` exists, `printf … >> c` writes git's
configuration and a rule for `printf` or a redirection into the workspace never sees it
(F103: `cp -s /workspace/.git/config c && printf '[core]…' >> c && git status` ran a
planted fsmonitor). So the engine counts each file a new link names as written by the
command that makes the link: `ln` (hard or symbolic), `link`, `cp -s`/`--symbolic-link`,
`cp -l`/`--link`, rsync's `--link-dest`. A link the file system already holds (a
checked-out repository's, an archive's) is outside what a command's text says.

Where a link's target is, read as the kernel reads it: a hard link's source, and
`cp -s`'s and `ln -r`'s, from the working directory (cp makes relative symbolic links only
in it); a symbolic link's relative target from the folder the link is in (`ln -s
../lib/x.so build/x.so` names `lib/x.so`), and, as a LINK_NAME may be an existing folder
the link goes into, from inside LINK_NAME as well.
"""

from governance.policy.getopt_words import GetoptWords
from governance.policy.paths import normalise_path

_RSYNC_LINK_DEST = "--link-dest"


def link_targets(program: str, args: list[str], words: GetoptWords) -> list[str]:
    """The files the links `program args` creates point at, relative to where it runs;
    `words`: the command line as getopt read it."""
    if program == "link":
        return words.operands[:1]
    if program == "rsync":
        return _rsync_link_dests(args)
    if program not in ("cp", "ln"):
        return []
    operands, directory, letters, longs = words.operands, words.target, words.letters, words.longs
    if program == "cp":
        symbolic = "s" in letters or any("symbolic-link".startswith(n) for n in longs)
        hard = "l" in letters or any("link".startswith(n) for n in longs)
        if not (symbolic or hard):
            return []
        return operands if directory is not None else operands[:-1]
    symbolic = "s" in letters or any("symbolic".startswith(n) for n in longs)
    relative = "r" in letters or any("relative".startswith(n) for n in longs)
    if directory is not None:
        sources, folders = operands, [directory]
    elif len(operands) == 1:
        sources, folders = operands, ["."]
    elif len(operands) == 2:
        link = operands[1]
        no_folder = "T" in letters or any("no-target-directory".startswith(n) for n in longs)
        sources = operands[:1]
        if link.endswith("/") and not no_folder:
            folders = [link]  # a folder for sure: the link goes into it
        else:
            folders = [_folder_of(link)] + ([] if no_folder else [link])
    else:
        sources, folders = operands[:-1], operands[-1:]
    if not symbolic or relative:
        return sources
    found = []
    for source in sources:
        if source.startswith("/"):
            found.append(source)
        else:
            found += [normalise_path(f"{folder}/{source}") for folder in folders]
    return list(dict.fromkeys(found))


def _folder_of(path: str) -> str:
    head, slash, _ = path.rstrip("/").rpartition("/")
    return head or ("/" if slash else ".")


def _rsync_link_dests(args: list[str]) -> list[str]:
    """rsync hard-links the destination's unchanged files to those in `--link-dest=DIR`
    (DIR relative to the destination): a write to one of them writes DIR's."""
    operands = [a for a in args if not a.startswith("-")]
    destination = operands[-1] if operands else "."
    found = []
    for k, token in enumerate(args):
        name, equals, value = token.partition("=")
        if name != _RSYNC_LINK_DEST:
            continue
        if not equals:
            value = args[k + 1] if k + 1 < len(args) else ""
        if value:
            found.append(value if value.startswith("/") else f"{destination}/{value}")
    return [normalise_path(path) for path in found]
