"""File-system helpers: atomic writes, content hashes, bounded reads of regular files, and reads,
writes and removals confined to an output folder.

``read_regular`` is how every file named by a path (a report, a cache, a configuration file, a
spec) is read: a regular file of at most a given size, never a FIFO, device or folder, and never
a wait on one.

The ``*_inside`` helpers take a root folder and a relative posix path, and open every folder
between them by file descriptor without following symlinks (``O_NOFOLLOW``): a symlink or a
non-folder on the way raises ``UnsafePathError`` instead of being followed, so nothing is read,
written or removed outside the root's real path, even if the tree changes meanwhile.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from pathlib import Path

# Folders are opened only to work inside them: O_PATH (Linux) needs no read permission on them.
_ROOT_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)
_FOLDER_FLAGS = _ROOT_FLAGS | os.O_NOFOLLOW


class UnsafePathError(OSError):
    """A folder on the way to a path inside a root is a symlink or not a folder."""


class NotRegularFileError(OSError):
    """A path to be written holds a FIFO, a device or a socket: writes replace only regular
    files and symlinks (a device node is never turned into a file)."""


class UnreadableFileError(OSError):
    """A path that is not a regular file, or a file over the size limit: nothing was kept of
    it. ``strerror`` says which ("not a regular file (a FIFO)", "larger than 64 MiB...")."""


MiB = 2**20
CACHE_LIMIT = 256 * MiB  # the most read_inside reads of a cache

# what a path holds that is neither a regular file nor a folder: writes never replace these
_SPECIAL = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
            (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
_KINDS = ((stat.S_ISDIR, "a folder"), *_SPECIAL)  # what reads refuse
_READ_FLAGS = (os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0)  # a FIFO: no wait
               | getattr(os, "O_CLOEXEC", 0))


def read_regular(path: Path | str, limit: int) -> bytes:
    """The bytes of the regular file at ``path`` (a symlink to one is followed), at most
    ``limit`` of them. A folder, FIFO, device or socket (checked before it is opened, and again
    once open, without blocking), or a file larger than ``limit`` (by its size, or by what it
    yields while read) raises UnreadableFileError; other errors (missing, no permission) are
    the OSError the system gave."""
    _require_regular(os.stat(path).st_mode)  # opening a device may act on it: not opened
    with os.fdopen(os.open(path, _READ_FLAGS), "rb") as reader:
        return _bounded_read(reader, limit)


def check_regular(path: Path | str, limit: int) -> None:
    """Raise what ``read_regular(path, limit)`` would for the file as it is now, from its status
    alone (nothing is opened): a check before long work, the read still checks again."""
    info = os.stat(path)
    _require_regular(info.st_mode)
    if info.st_size > limit:
        raise _too_large(limit)


def _bounded_read(reader, limit: int) -> bytes:
    info = os.fstat(reader.fileno())
    _require_regular(info.st_mode)  # replaced since it was checked
    if info.st_size > limit:
        raise _too_large(limit)
    data = reader.read(limit + 1)
    if len(data) > limit:
        raise _too_large(limit)
    return data


def _require_regular(mode: int) -> None:
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "something else")
        raise UnreadableFileError(errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL,
                                  f"not a regular file ({kind})")


def _too_large(limit: int) -> UnreadableFileError:
    size = f"{limit // MiB} MiB" if limit >= MiB else f"{limit} bytes"
    return UnreadableFileError(errno.EFBIG, f"larger than {size}, the most rocmigrate reads "
                               "of it")


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def special_file_kind(path: Path) -> str | None:
    """What is at ``path`` when a write must not replace it ("a FIFO", "a character device"...);
    None for a regular file, a symlink, a folder or nothing."""
    try:
        return _special_kind(os.lstat(path).st_mode)
    except OSError:
        return None


def atomic_write(path: Path, data: bytes, mode_from: Path | None = None) -> None:
    """Write via a temporary file in the same folder and rename it over ``path``: readers see
    the old file or the new one, never a partial one. The folder (created if missing) is the
    caller's choice and may be reached through symlinks; use ``write_inside`` for paths that
    must stay inside a root. A FIFO, device or socket at ``path`` raises NotRegularFileError."""
    path.parent.mkdir(parents=True, exist_ok=True)
    folder = os.open(path.parent, _ROOT_FLAGS)
    try:
        _replace_in(folder, path.name, data, mode_from)
    finally:
        os.close(folder)


def write_inside(root: Path, rel: str, data: bytes, mode_from: Path | None = None,
                 if_changed: bool = True) -> bool:
    """Atomically write ``root/rel``, creating its folders, never through a symlink on the way
    (a symlink at ``rel`` itself is replaced, not followed; a FIFO, device or socket there
    raises NotRegularFileError). With ``if_changed``, a file that already holds ``data`` is
    left alone. Returns whether it wrote."""
    folder_parts, name = _split(rel)
    folder = _open_folders(root, folder_parts, create=True)
    try:
        if if_changed and _read_at(folder, name) == data:
            return False
        _replace_in(folder, name, data, mode_from, shown=rel)
        return True
    finally:
        os.close(folder)


def folder_inside(root: Path, rel: str) -> Path:
    """The folder ``root/rel``, made where missing, never through a symlink on the way (one
    there raises UnsafePathError): what is written into it stays inside ``root``."""
    folder_parts, name = _split(rel)  # a plain relative path: no "", "." or ".." part
    os.close(_open_folders(root, [*folder_parts, name], create=True))
    return root / rel


def read_inside(root: Path, rel: str, limit: int = CACHE_LIMIT) -> bytes | None:
    """The bytes of the regular file ``root/rel``, or None when there is none; never follows a
    symlink (on the way: ``UnsafePathError``; at ``rel`` itself: None). A file larger than
    ``limit`` raises UnreadableFileError."""
    folder_parts, name = _split(rel)
    try:
        folder = _open_folders(root, folder_parts, create=False)
    except FileNotFoundError:
        return None
    try:
        return _read_at(folder, name, limit)
    finally:
        os.close(folder)


def remove_inside(root: Path, rel: str) -> bool:
    """Remove ``root/rel`` if it is a regular file reached without any symlink; returns whether
    it removed it. Symlinks, folders, and paths through symlinks are left alone."""
    try:
        folder_parts, name = _split(rel)
        folder = _open_folders(root, folder_parts, create=False)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.lstat(name, dir_fd=folder).st_mode):
            return False
        os.unlink(name, dir_fd=folder)
        return True
    except OSError:  # gone meanwhile, or cannot be removed (a read-only folder): left alone
        return False
    finally:
        os.close(folder)


def symlink_inside(root: Path, rel: str, target: str) -> bool:
    """Make ``root/rel`` a symlink to ``target`` (replacing a file or link there, atomically),
    never through a symlink on the way; returns whether it changed anything."""
    folder_parts, name = _split(rel)
    folder = _open_folders(root, folder_parts, create=True)
    try:
        try:
            if os.readlink(name, dir_fd=folder) == target:
                return False
        except FileNotFoundError:
            pass
        except OSError as err:
            if err.errno != errno.EINVAL:  # EINVAL: there is something, but not a symlink
                raise
            if stat.S_ISDIR(os.lstat(name, dir_fd=folder).st_mode):
                raise IsADirectoryError(errno.EISDIR, "a folder is in the way") from None
            _require_replaceable(folder, name)
        temporary = _temporary_name(name)
        os.symlink(target, temporary, dir_fd=folder)
        try:
            os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            _unlink_quietly(temporary, folder)
            raise
        return True
    finally:
        os.close(folder)


def _split(rel: str) -> tuple[list[str], str]:
    parts = rel.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise UnsafePathError(errno.EINVAL, f"{rel!r} is not a plain relative path")
    return parts[:-1], parts[-1]


def _open_folders(root: Path, parts: list[str], create: bool) -> int:
    """A descriptor of ``root/parts...``, each part opened without following symlinks."""
    current = os.open(root, _ROOT_FLAGS)
    try:
        for index, part in enumerate(parts):
            try:
                following = _open_part(part, current, parts[:index + 1])
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(part, dir_fd=current)
                except FileExistsError:  # made meanwhile (or a dangling symlink): open says which
                    pass
                following = _open_part(part, current, parts[:index + 1])
            os.close(current)
            current = following
    except BaseException:
        os.close(current)
        raise
    return current


def _open_part(part: str, folder: int, shown: list[str]) -> int:
    """A descriptor of the folder ``part`` in ``folder``, not following a symlink (a missing
    one raises FileNotFoundError as it is)."""
    try:
        return os.open(part, _FOLDER_FLAGS, dir_fd=folder)
    except OSError as err:
        raise _unsafe(err, folder, part, shown) from None


def _unsafe(err: OSError, folder: int, part: str, shown: list[str]) -> OSError:
    """A clear error for a part of the way that cannot be opened as a folder."""
    where = "/".join(shown)
    try:
        mode = os.lstat(part, dir_fd=folder).st_mode
    except OSError:
        return err
    if stat.S_ISLNK(mode):
        return UnsafePathError(errno.ELOOP, f"{where} is a symlink; not followed")
    if not stat.S_ISDIR(mode):
        return UnsafePathError(errno.ENOTDIR, f"{where} is not a folder")
    return err


def _read_at(folder: int, name: str, limit: int | None = None) -> bytes | None:
    try:
        handle = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK  # a FIFO: no wait
                         | getattr(os, "O_CLOEXEC", 0), dir_fd=folder)
    except OSError as err:
        if err.errno in (errno.ENOENT, errno.ELOOP, errno.EISDIR, errno.ENXIO):
            return None
        raise
    with os.fdopen(handle, "rb") as reader:
        if not stat.S_ISREG(os.fstat(reader.fileno()).st_mode):
            return None
        return reader.read() if limit is None else _bounded_read(reader, limit)


def _temporary_name(name: str) -> str:
    return f".{name}.{os.urandom(4).hex()}.tmp"


def _special_kind(mode: int) -> str | None:
    return next((kind for test, kind in _SPECIAL if test(mode)), None)


def _require_replaceable(folder: int, name: str) -> None:
    """Raise NotRegularFileError when ``name`` in ``folder`` is a FIFO, device or socket
    (checked before the rename that would replace it)."""
    try:
        kind = _special_kind(os.lstat(name, dir_fd=folder).st_mode)
    except FileNotFoundError:
        return
    if kind:
        raise NotRegularFileError(errno.EEXIST, f"it is {kind}, not a regular file; rocmigrate "
                                  "replaces only regular files")


def _read_umask() -> int | None:
    """The process's umask without changing it (Linux: /proc/self/status' ``Umask:`` line,
    Linux 4.7 and later), or None where that cannot be read."""
    try:
        with open("/proc/self/status", "rb") as status:
            for line in status:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8) & 0o777
    except (OSError, ValueError, IndexError):
        pass
    return None


def _umask_at_import() -> int:
    """The umask as the program started: read without changing it where /proc tells it; else by
    setting it and setting it back at once (at import, before any thread of ours writes)."""
    found = _read_umask()
    if found is not None:
        return found
    found = os.umask(0o022)
    os.umask(found)
    return found


_UMASK = _umask_at_import()


def current_umask() -> int:
    """The umask now (read from /proc, so a change by the program is seen; no other thread's
    files are affected by reading it), or the one read at import where /proc cannot tell."""
    found = _read_umask()
    return _UMASK if found is None else found


def new_file_mode() -> int:
    """The mode a new file gets, as ``open(..., "w")`` would give it: 0o666 less the umask."""
    return 0o666 & ~current_umask()


def _kept_mode(folder: int, name: str, mode_from: Path | None) -> int:
    """The mode a written file ends with: ``mode_from``'s when given; else the permissions of
    the regular file it replaces (without set-user-ID, set-group-ID or sticky bits: the new
    file is ours; a symlink there is replaced, not followed: not kept); else a new file's
    (0o666 less the umask)."""
    if mode_from is not None:
        return os.stat(mode_from).st_mode & 0o7777
    try:
        there = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return new_file_mode()
    return there.st_mode & 0o777 if stat.S_ISREG(there.st_mode) else new_file_mode()


def _replace_in(folder: int, name: str, data: bytes, mode_from: Path | None,
                shown: str | None = None) -> None:
    """Write ``data`` to a temporary file in the open ``folder`` and rename it over ``name``
    (never over a FIFO, device or socket). The file gets ``mode_from``'s mode when given, else
    the mode of the regular file it replaces, else a new file's mode (0o666 less the umask);
    the temporary is private (0o600) until it holds all of ``data`` and that mode."""
    _require_replaceable(folder, name)
    mode = _kept_mode(folder, name, mode_from)
    for _attempt in range(100):
        temporary = _temporary_name(name)
        try:
            handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                             | getattr(os, "O_CLOEXEC", 0), 0o600, dir_fd=folder)
            break
        except FileExistsError:
            continue
    else:  # pragma: no cover - 100 collisions of 32 random bits
        raise FileExistsError(errno.EEXIST, f"no free temporary name for {shown or name}")
    try:
        with os.fdopen(handle, "wb") as writer:
            writer.write(data)
            os.fchmod(writer.fileno(), mode)
        os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        _unlink_quietly(temporary, folder)
        raise


def _unlink_quietly(name: str, folder: int) -> None:
    try:
        os.unlink(name, dir_fd=folder)
    except OSError:
        pass
