"""What cnsim writes where: the marker of its output directories, the names of
its temporary files, and the claim on a destination taken before a run.

Every directory cnsim writes as a whole (a run's result, a figure directory)
carries a marker file, ``.cnsim-result``: JSON saying what kind of output it
is, which cnsim wrote it, and every file it wrote with its size and SHA-256::

    {"cnsim": "result", "cnsim_version": "...", "engine_id": "...", "written": "...",
     "files": {"flows.parquet": {"bytes": 1234, "sha256": "..."}, ...}}

cnsim replaces such a directory only when asked to (``--force``,
``force=True``) and only if it holds nothing cnsim did not write; anything
else in the way is refused, by name.

Temporary names are ``.<name>.<8 characters>.tmp`` (being written) and
``.<name>.<8 characters>.old`` (being replaced). :func:`temp_name_pattern`
is the one definition of these names: the writers below make them, and
cleaning up after an interrupted sweep removes exactly these names and
nothing else.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import secrets
import shutil
import tempfile
from collections.abc import Callable, Collection, Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

MARKER_FILE = ".cnsim-result"
KIND_RESULT = "result"
KIND_FIGURES = "figures"

TEMP = "tmp"
OLD = "old"
#: The random part of a temporary name: tempfile.mkdtemp's 8 characters, or 8 hex digits.
_TOKEN = r"[a-z0-9_]{8}"
#: Room a temporary name needs around the name it stands for: ".", ".", 8 characters, ".tmp".
_TEMP_EXTRA = 14
#: Longest file name and path when the file system does not say (Linux's limits).
_NAME_MAX = 255
_PATH_MAX = 4096
#: Longest name cnsim puts inside an output directory, kept free in the path-length check.
_INNER_MAX = 64

#: How a directory that cnsim did not mark can still be recognised as cnsim's:
#: given the directory, the names in it that cnsim wrote, or None if it is not
#: cnsim's (results and figures written before markers existed).
Unmarked = Callable[[Path], Collection[str] | None]


class ResultError(Exception):
    """A result directory cannot be read or written (bad path, not a result, in the way, ...)."""


# --------------------------------------------------------------------------- temporary names


def temp_name_pattern(name_pattern: str) -> re.Pattern[str]:
    """The temporary names cnsim makes for a name matching the regular expression *name_pattern*.

    Use with ``fullmatch``.
    """
    return re.compile(rf"\.(?:{name_pattern})\.{_TOKEN}\.(?:{TEMP}|{OLD})")


def temp_sibling(path: Path, kind: str = TEMP) -> Path:
    """A fresh temporary name beside *path* (``.<name>.<8 hex digits>.<kind>``)."""
    return path.with_name(f".{_temp_stem(path.name)}.{secrets.token_hex(4)}.{kind}")


def _temp_stem(name: str) -> str:
    """*name*, cut so that its temporary names still fit in a file name."""
    raw = os.fsencode(name)
    if len(raw) + _TEMP_EXTRA <= _NAME_MAX:
        return name
    return raw[: _NAME_MAX - _TEMP_EXTRA].decode("utf-8", "ignore")


def write_atomically(path: Path, write: Callable[[Path], Any]) -> None:
    """Write *path* through a temporary sibling renamed into place: never a half-written file.

    An OSError (a full disk, ...) is raised again naming *path*.
    """
    tmp = temp_sibling(path)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise write_error(path, exc) from None
        raise


def write_new(path: Path, write: Callable[[Path], Any]) -> None:
    """Create the file *path*, which must not exist, through a temporary sibling linked into
    place: the file is either absent or complete, and a file that appears there meanwhile is
    never replaced (:class:`FileExistsError`, naming *path*). Another OSError names *path*."""
    tmp = temp_sibling(path)
    try:
        write(tmp)
        link_into_place(tmp, path)
    except FileExistsError:
        raise
    except OSError as exc:
        raise write_error(path, exc) from None
    finally:
        tmp.unlink(missing_ok=True)


def link_into_place(tmp: Path, target: Path) -> None:
    """Rename *tmp* to *target* unless *target* exists (:class:`FileExistsError`): a hard link
    fails if it does, even if it appeared after any check; where the file system has no hard
    links, a rename after a last check. *tmp* is left for the caller to remove."""
    try:
        os.link(tmp, target)
    except FileExistsError:
        raise FileExistsError(errno.EEXIST, "File exists", os.fspath(target)) from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS, errno.EMLINK):
            raise
        if target.exists() or target.is_symlink():
            raise FileExistsError(errno.EEXIST, "File exists", os.fspath(target)) from None
        os.rename(tmp, target)


def write_error(path: Path, exc: OSError) -> OSError:
    """*exc* (raised while writing *path*, perhaps under a temporary name) as an OSError naming *path*."""
    if exc.errno is not None:
        return OSError(exc.errno, f"cannot write: {exc.strerror or exc}", os.fspath(path))
    return OSError(f"{path}: cannot write: {exc}")


# --------------------------------------------------------------------------- marker and verification


def file_record(path: Path) -> dict[str, Any]:
    """Size and SHA-256 of a file, as the marker lists them."""
    with open(path, "rb") as fh:
        digest = hashlib.file_digest(fh, "sha256").hexdigest()
    return {"bytes": path.stat().st_size, "sha256": digest}


def read_marker(directory: Path) -> dict[str, Any] | None:
    """The marker of *directory* if it has a valid one, else None."""
    try:
        doc = json.loads((directory / MARKER_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if isinstance(doc, dict) and isinstance(doc.get("cnsim"), str) and isinstance(doc.get("files"), dict):
        return doc
    return None


def check_files(directory: Path, marker: Mapping[str, Any], *, hashes: bool = True) -> str | None:
    """The first file of *marker* that is not as cnsim wrote it, and how; None if all are.

    For example ``"flows.parquet truncated (expected 1234 bytes, found 512)"``.
    """
    for name, record in marker["files"].items():
        path = directory / name
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            return f"{name} is missing"
        except OSError as exc:
            return f"{name} cannot be read ({exc.strerror or exc})"
        expected = record.get("bytes")
        if size != expected:
            how = "truncated" if size < expected else "longer than written"
            return f"{name} {how} (expected {expected} bytes, found {size})"
        if hashes:
            try:
                digest = file_record(path)["sha256"]
            except OSError as exc:
                return f"{name} cannot be read ({exc.strerror or exc})"
            if digest != record.get("sha256"):
                return f"{name} changed since cnsim wrote it (its SHA-256 differs)"
    return None


def foreign_entries(directory: Path, owned: Collection[str]) -> list[str]:
    """The entries of *directory* that cnsim did not write: not in *owned*, not the marker,
    and not a sub-directory that is itself a marked cnsim output holding nothing else."""
    foreign = []
    for entry in sorted(directory.iterdir()):
        if entry.name == MARKER_FILE or (entry.name in owned and not entry.is_dir()):
            continue
        if entry.is_dir() and not entry.is_symlink():
            marker = read_marker(entry)
            if marker is not None and not foreign_entries(entry, marker["files"]):
                continue
            foreign.append(entry.name + "/")
        else:
            foreign.append(entry.name)
    return foreign


def _listed(names: Iterable[str], limit: int = 3) -> str:
    names = list(names)
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


# --------------------------------------------------------------------------- destinations


def check_path_length(target: Path) -> None:
    """Refuse a path the file system cannot hold (checked before anything runs)."""
    absolute = Path(os.path.abspath(target))
    name_max, path_max = _limits(absolute)
    for part in absolute.parts[1:]:
        size = len(os.fsencode(part))
        if size > name_max:
            raise ResultError(
                f"{target}: the name {part[:24]}... is too long ({size} bytes; the file system allows {name_max})"
            )
    size = len(os.fsencode(os.fspath(absolute)))
    if size + _INNER_MAX > path_max:
        raise ResultError(f"{target}: path too long ({size} bytes; the file system allows {path_max})")


def _limits(path: Path) -> tuple[int, int]:
    existing = path
    while not os.path.exists(existing) and existing != existing.parent:  # False (no error) for too long names
        existing = existing.parent
    try:
        return os.pathconf(existing, "PC_NAME_MAX"), os.pathconf(existing, "PC_PATH_MAX")
    except (AttributeError, OSError, ValueError):
        return _NAME_MAX, _PATH_MAX


def check_replaceable(target: Path, kind: str, *, force: bool, unmarked: Unmarked | None = None) -> None:
    """Raise :class:`ResultError` unless *target* may become a new cnsim output of *kind*.

    Allowed: nothing there, an empty directory, or (with *force*) a cnsim
    output of the same kind that holds nothing cnsim did not write.
    """
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise ResultError(f"{target}: exists and is not a directory; refusing to replace it")
    if not target.exists():
        return
    entries = sorted(e.name for e in target.iterdir())
    if not entries:
        return
    marker = read_marker(target)
    if marker is not None:
        owned = marker["files"] if marker["cnsim"] == kind else None
    else:
        owned = unmarked(target) if unmarked is not None else None
    if owned is None:
        raise ResultError(
            f"{target}: exists and is not a cnsim {kind} directory (it holds {_listed(entries)}); "
            "refusing to replace it"
        )
    foreign = foreign_entries(target, owned)
    if foreign:
        raise ResultError(
            f"{target}: holds files cnsim did not write ({_listed(foreign)}); refusing to replace it"
        )
    if not force:
        earlier = "an earlier cnsim result" if kind == KIND_RESULT else f"earlier cnsim {kind}"
        raise ResultError(f"{target}: holds {earlier}; use --force (Python: force=True) to replace it")


class Reservation:
    """A destination claimed before a run.

    :func:`reserve` checked the destination and created an empty temporary
    directory beside it; the output is written into :attr:`temp`
    (:meth:`write`), then :meth:`commit` writes the marker and renames it
    into place. Left without a commit (an error, Ctrl-C), the temporary
    directory and any parent directories it created are removed.
    """

    def __init__(self, target: Path, temp: Path, kind: str, force: bool, unmarked: Unmarked | None,
                 created: list[Path]) -> None:
        self.target = target
        self.temp = temp
        self.kind = kind
        self.force = force
        self.unmarked = unmarked
        self.written: list[str] = []
        self._created = created
        self._done = False

    def write(self, name: str, write: Callable[[Path], Any]) -> Path:
        """Write the file *name* into the temporary directory with ``write(path)``; an
        OSError names the file's final path."""
        path = self.temp / name
        try:
            write(path)
        except OSError as exc:
            raise write_error(self.target / name, exc) from None
        self.written.append(name)
        return path

    def commit(self, **about: Any) -> Path:
        """Write the marker (with *about*, e.g. the engine id) and move the output into place."""
        from . import __version__

        files = {}
        for name in self.written:
            try:
                files[name] = file_record(self.temp / name)
            except OSError as exc:
                raise write_error(self.target / name, exc) from None
        doc = {"cnsim": self.kind, "cnsim_version": __version__, **about,
               "written": datetime.now(UTC).isoformat(timespec="seconds"), "files": files}
        text = json.dumps(doc, indent=1) + "\n"
        try:
            (self.temp / MARKER_FILE).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise write_error(self.target / MARKER_FILE, exc) from None
        target = self.target
        if target.exists() or target.is_symlink():
            try:
                # Again: something may have appeared there while the run went on.
                check_replaceable(target, self.kind, force=self.force, unmarked=self.unmarked)
            except ResultError as exc:
                self._done = True  # keep the new output where it is
                raise ResultError(f"{exc} (the new {self.kind} is kept in {self.temp})") from None
        if target.is_dir() and any(target.iterdir()):
            old = temp_sibling(target, OLD)
            os.rename(target, old)
            os.rename(self.temp, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(self.temp, target)  # an empty directory is replaced too
        self._done = True
        return target

    def release(self) -> None:
        """Remove the temporary directory and the parents made for it (if still empty)."""
        if self._done:
            return
        self._done = True
        shutil.rmtree(self.temp, ignore_errors=True)
        for parent in self._created:
            try:
                parent.rmdir()
            except OSError:
                break

    def __enter__(self) -> Reservation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def reserve(target: str | os.PathLike, kind: str, *, force: bool = False,
            unmarked: Unmarked | None = None) -> Reservation:
    """Check *target* and claim it: see :class:`Reservation` and :func:`check_replaceable`.

    Everything that can be known before a run is checked here, so the final
    rename cannot fail for it: a file in the way, a directory cnsim did not
    write, a path too long, a parent that cannot be created or written.
    """
    target = Path(target)
    check_path_length(target)
    check_replaceable(target, kind, force=force, unmarked=unmarked)
    parent = target.parent
    created = [p for p in (parent, *parent.parents) if not p.exists()]
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ResultError(f"{exc.filename or parent}: cannot create directory: {exc.strerror or exc}") from None
    try:
        temp = Path(tempfile.mkdtemp(prefix=f".{_temp_stem(target.name)}.", suffix=f".{TEMP}", dir=parent))
        os.chmod(temp, 0o755)
    except OSError as exc:
        for p in created:
            with contextlib.suppress(OSError):
                p.rmdir()
        raise ResultError(f"{parent}: cannot write into this directory: {exc.strerror or exc}") from None
    return Reservation(target, temp, kind, force, unmarked, created)

