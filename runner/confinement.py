"""Workspace confinement: every file path stays inside the run's workspace (SPEC §9).

Paths are resolved with `realpath` semantics, but by walking one component at a time from
a directory fd of the workspace root, opening each with `O_NOFOLLOW`. The kernel is never
asked to follow a symbolic link: a link met on the way is read and its target walked under
the same rules, so a link swapped in after a check cannot redirect the open.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeVar

T = TypeVar("T")

_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_SYMLINK_ERRNOS = (
    errno.ELOOP,
    errno.ENOTDIR,
)  # O_NOFOLLOW|O_DIRECTORY gives ENOTDIR on Linux


class WorkspaceEscape(PermissionError):
    """A path that leaves the workspace, or that cannot be opened safely inside it."""


@dataclass(frozen=True)
class DirEntry:
    """One entry of a listed directory; symbolic links are reported, not followed."""

    name: str
    kind: Literal["file", "directory", "symlink", "other"]
    size: int | None


class _SymlinkMet(Exception):
    def __init__(self, original: OSError | None) -> None:
        self.original = original


class Workspace:
    """The run's workspace directory, and the only way the runner touches files in it.

    `virtual_root` is the path under which the model and the policy see the workspace
    (`/workspace` in the runner image); absolute paths under it, or under the real root,
    are accepted. Writes into a directory named in `protected_names` (`.git` by default:
    its config and hooks run code) are refused.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        virtual_root: str | None = "/workspace",
        protected_names: frozenset[str] = frozenset({".git"}),
        max_path_length: int = 4096,
        max_name_length: int = 255,
        max_symlink_hops: int = 40,
    ) -> None:
        self.root = Path(os.path.realpath(root))
        if not self.root.is_dir():
            raise ValueError(f"workspace root {root!r} is not a directory")
        if virtual_root is not None and (
            not virtual_root.startswith("/") or virtual_root.rstrip("/") == ""
        ):
            raise ValueError("virtual_root must be an absolute path other than /")
        self.virtual_root = (virtual_root or str(self.root)).rstrip("/")
        self.protected_names = protected_names
        self.max_path_length = max_path_length
        self.max_name_length = max_name_length
        self.max_symlink_hops = max_symlink_hops

    def open_read(self, path: str | os.PathLike[str], *, max_bytes: int | None = None) -> bytes:
        """The content of a regular file inside the workspace (at most `max_bytes`)."""

        def read(dir_fd: int, name: str | None, names: list[str]) -> bytes:
            if name is None:
                raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
            fd = _open_component(dir_fd, name, os.O_RDONLY | os.O_NONBLOCK)
            try:
                _require_plain_file(os.fstat(fd), path)
                chunks: list[bytes] = []
                remaining = max_bytes if max_bytes is not None else -1
                while remaining != 0:
                    chunk = os.read(fd, 65536 if remaining < 0 else min(65536, remaining))
                    if not chunk:
                        break
                    chunks.append(chunk)
                    remaining = remaining - len(chunk) if remaining > 0 else remaining
                return b"".join(chunks)
            finally:
                os.close(fd)

        return self._walk(path, read)

    def write(
        self,
        path: str | os.PathLike[str],
        data: bytes | str,
        *,
        create_parents: bool = False,
    ) -> int:
        """Replace (or create) a regular file inside the workspace; returns the bytes written."""
        payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)

        def write(dir_fd: int, name: str | None, names: list[str]) -> int:
            if name is None:
                raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
            self._refuse_protected([*names, name], path)
            fd = _open_component(dir_fd, name, os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK)
            try:
                _require_plain_file(os.fstat(fd), path)
                os.ftruncate(fd, 0)
                view = memoryview(payload)
                while view:
                    view = view[os.write(fd, view) :]
                return len(payload)
            finally:
                os.close(fd)

        return self._walk(path, write, create_parents=create_parents, refuse_protected=True)

    def list_dir(self, path: str | os.PathLike[str] = ".") -> list[DirEntry]:
        """The entries of a directory inside the workspace, sorted by name."""

        def listing(dir_fd: int, name: str | None, names: list[str]) -> list[DirEntry]:
            fd = os.dup(dir_fd) if name is None else _open_component(dir_fd, name, os.O_DIRECTORY)
            try:
                with os.scandir(fd) as entries:
                    return sorted((_describe(entry) for entry in entries), key=lambda e: e.name)
            finally:
                os.close(fd)

        return self._walk(path, listing)

    def resolve(self, path: str | os.PathLike[str]) -> Path:
        """The real path a name refers to, which may not exist yet; raises `WorkspaceEscape`."""

        def located(dir_fd: int, name: str | None, names: list[str]) -> Path:
            if name is None:
                return self.root.joinpath(*names)
            try:
                mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
            except FileNotFoundError:
                return self.root.joinpath(*names, name)
            if stat.S_ISLNK(mode):
                raise _SymlinkMet(None)
            return self.root.joinpath(*names, name)

        return self._walk(path, located, missing_is_lexical=True)

    def virtual_path(self, path: str | os.PathLike[str]) -> str:
        """How the model and the policy see a path: absolute, under `virtual_root`."""
        text = os.fspath(path)
        relative = self._relative_text(text) if text.startswith("/") else text
        if relative is None:
            return text
        return f"{self.virtual_root}/{relative}".rstrip("/") if relative else self.virtual_root

    def is_protected(self, real_path: Path) -> bool:
        relative = real_path.relative_to(self.root)
        return any(part in self.protected_names for part in relative.parts)

    def _walk(
        self,
        path: str | os.PathLike[str],
        on_final: Callable[[int, str | None, list[str]], T],
        *,
        create_parents: bool = False,
        missing_is_lexical: bool = False,
        refuse_protected: bool = False,
    ) -> T:
        pending = deque(self._parts(path))
        fds = [os.open(self.root, _DIRECTORY_FLAGS)]
        names: list[str] = []
        hops = 0
        try:
            while True:
                if not pending:
                    return on_final(fds[-1], None, names)
                name = pending.popleft()
                if name == "..":
                    if len(fds) == 1 and self.root == Path("/"):
                        continue  # the file system's root is its own parent
                    if len(fds) == 1:
                        raise WorkspaceEscape(f"{path!r} climbs above the workspace root")
                    os.close(fds.pop())
                    names.pop()
                    continue
                try:
                    if pending:
                        if refuse_protected:
                            self._refuse_protected([name], path)
                        fds.append(self._open_directory(fds[-1], name, create_parents))
                        names.append(name)
                    else:
                        return on_final(fds[-1], name, names)
                except _SymlinkMet as met:
                    target = _link_target(fds[-1], name, met.original)
                    hops += 1
                    if hops > self.max_symlink_hops:
                        raise WorkspaceEscape(f"{path!r}: too many symbolic links") from None
                    if target.startswith("/"):
                        relative = _under(target, str(self.root))
                        if relative is None:
                            raise WorkspaceEscape(
                                f"{path!r} goes through a symbolic link to {target!r}, "
                                "outside the workspace"
                            ) from None
                        for fd in fds[1:]:
                            os.close(fd)
                        del fds[1:]
                        names.clear()
                    else:
                        relative = target
                    pending.extendleft(reversed(_split(relative)))
                except FileNotFoundError:
                    if not missing_is_lexical or not pending:
                        raise FileNotFoundError(
                            errno.ENOENT, "no such file or directory", str(path)
                        ) from None
                    # Nothing exists below a missing directory, so no link can redirect the rest.
                    return self._lexical_rest(path, names, [name, *pending])
        finally:
            for fd in fds:
                os.close(fd)

    def _open_directory(self, dir_fd: int, name: str, create: bool) -> int:
        try:
            return _open_component(dir_fd, name, os.O_DIRECTORY)
        except FileNotFoundError:
            if not create:
                raise
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o755, dir_fd=dir_fd)
            return _open_component(dir_fd, name, os.O_DIRECTORY)

    def _lexical_rest(self, path: object, names: list[str], rest: list[str]) -> Path:
        resolved = list(names)
        for name in rest:
            if name != "..":
                resolved.append(name)
            elif resolved:
                resolved.pop()
            elif self.root == Path("/"):
                continue
            else:
                raise WorkspaceEscape(f"{path!r} climbs above the workspace root")
        return self.root.joinpath(*resolved)

    def _parts(self, path: str | os.PathLike[str]) -> list[str]:
        if isinstance(path, os.PathLike):
            path = os.fspath(path)
        if not isinstance(path, str):
            raise WorkspaceEscape(f"a path must be text, not {type(path).__name__}")
        if "\x00" in path:
            raise WorkspaceEscape("a path must not contain a NUL byte")
        if not path:
            raise WorkspaceEscape("an empty path names nothing")
        if len(path.encode("utf-8", "surrogateescape")) > self.max_path_length:
            raise WorkspaceEscape(f"path longer than {self.max_path_length} bytes")
        relative = self._relative_text(path) if path.startswith("/") else path
        if relative is None:
            raise WorkspaceEscape(f"{path!r} is an absolute path outside the workspace")
        parts = _split(relative)
        for part in parts:
            if len(part.encode("utf-8", "surrogateescape")) > self.max_name_length:
                raise WorkspaceEscape(
                    f"a path component is longer than {self.max_name_length} bytes"
                )
        return parts

    def _relative_text(self, absolute: str) -> str | None:
        for prefix in (str(self.root), self.virtual_root):
            relative = _under(absolute, prefix)
            if relative is not None:
                return relative
        return None

    def _refuse_protected(self, names: list[str], path: object) -> None:
        for name in names:
            if name in self.protected_names:
                raise WorkspaceEscape(f"{path!r} is inside the protected directory {name!r}")


def _open_component(dir_fd: int, name: str, flags: int) -> int:
    try:
        return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=dir_fd)
    except OSError as error:
        if error.errno in _SYMLINK_ERRNOS:
            raise _SymlinkMet(error) from None
        raise


def _link_target(dir_fd: int, name: str, original: OSError | None) -> str:
    try:
        return os.readlink(name, dir_fd=dir_fd)
    except OSError as error:
        if original is not None and error.errno == errno.EINVAL:
            raise original from None  # not a link after all: a file where a directory was needed
        raise WorkspaceEscape(f"{name!r} changed while it was being opened") from None


def _require_plain_file(status: os.stat_result, path: object) -> None:
    if stat.S_ISDIR(status.st_mode):
        raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
    if not stat.S_ISREG(status.st_mode):
        raise WorkspaceEscape(f"{path!r} is not a regular file (device, FIFO or socket)")
    if status.st_nlink > 1:
        raise WorkspaceEscape(
            f"{path!r} has other hard links; it may be the same file as one outside the workspace"
        )


def _describe(entry: os.DirEntry[str]) -> DirEntry:
    if entry.is_symlink():
        return DirEntry(entry.name, "symlink", None)
    if entry.is_dir(follow_symlinks=False):
        return DirEntry(entry.name, "directory", None)
    if entry.is_file(follow_symlinks=False):
        return DirEntry(entry.name, "file", entry.stat(follow_symlinks=False).st_size)
    return DirEntry(entry.name, "other", None)


def _under(absolute: str, prefix: str) -> str | None:
    prefix = prefix.rstrip("/")
    if absolute == prefix:
        return ""
    if absolute.startswith(prefix + "/"):
        return absolute[len(prefix) + 1 :]
    return None


def _split(relative: str) -> list[str]:
    return [part for part in relative.split("/") if part not in ("", ".")]
