"""Lexical path normalisation: what a path names before any symlink is followed.

`/workspace/../etc/passwd` is `/etc/passwd`, `a/./b//c/` is `a/b/c`, `/..` is `/`.
It is lexical on purpose (the policy engine never touches a file system): a
symlink inside the workspace that points outside it is the runner's realpath
confinement's job (and on an agent CLI's machine, the hook resolves paths with the
same walk before asking), not the policy's.
"""


def normalise_path(path: str) -> str:
    absolute = path.startswith("/")
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts and parts[-1] != "..":
                parts.pop()
            elif not absolute:
                parts.append("..")
            continue
        parts.append(part)
    joined = "/".join(parts)
    if absolute:
        return "/" + joined
    return joined or "."


def base_name(path: str) -> str:
    """The last component of a normalised path (`/usr/bin/../bin/rm` → `rm`)."""
    return normalise_path(path).rsplit("/", 1)[-1] or "/"
