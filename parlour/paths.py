"""Output paths: every command checks each path it will write before any game or
training starts, so a bad path costs one line and exit 2, never a finished run.

The rule, the same for every command (README "Output paths"):

- a FILE option (``--json``, ``--plot``, ``--record``, ``--db``) may name a file that
  exists or not; missing parent directories are created, when the command starts.
- a DIRECTORY option (``--out``, ``--run-dir``) may name a directory that exists or
  not; it and its missing parents are created by the command when it writes.
- ``new-game --envs-dir`` must name an existing directory (it is a package folder).

Refused, in one line: a file's path that is an existing directory or ends in ``/``, a
directory's path that is an existing file, a path below a file, and a path where this
process cannot create or write (a read-only file system such as ``/proc``, a folder
without write permission). Write access is tried for real (a temporary file made and
removed in the nearest existing folder), since permission bits say nothing for root
or for special file systems.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path


def check_output_path(
    path: str | Path, directory: bool = False, what: str = "", exists: bool = False
) -> None:
    """Raise ValueError (one line) unless ``path`` can be written: a file (or, with
    ``directory``, a directory) that exists and is writable, or that can be created
    with its missing parents; ``exists`` demands an existing directory. Writes
    nothing that stays."""
    text = os.fspath(path)
    label = f"{what} {text}" if what else text
    if not text.strip():
        raise ValueError(f"{what or 'output path'}: empty path")
    p = Path(text)
    if not directory and text.endswith(("/", os.sep)):
        raise ValueError(f"{label} names a directory, not a file")
    if p.exists():
        if directory and not p.is_dir():
            raise ValueError(f"{label} is a file, not a directory")
        if not directory and p.is_dir():
            raise ValueError(f"{label} is a directory, not a file")
        if directory:
            _probe_dir(p, label, f"{label} is not writable")
        else:
            _probe_file(p, label)
        return
    if exists:
        raise ValueError(f"{label}: no such directory")
    parent = p.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise ValueError(f"cannot create {label}: {parent} is a file, not a directory")
    _probe_dir(parent, label, f"cannot create {label}: {parent} is not writable")


def prepare_output_file(path: str | Path, what: str = "") -> Path:
    """`check_output_path` for a file, then create its missing parent directories;
    returns the path. Called when a command starts, before any work."""
    check_output_path(path, what=what)
    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        label = f"{what} {path}" if what else str(path)
        raise ValueError(f"cannot create {label}: {_reason(err)}") from None
    return p


def _probe_dir(folder: Path, label: str, refusal: str) -> None:
    """Make and remove a temporary file in ``folder``: the only sure test of write
    access (root passes ``os.access`` on read-only file systems)."""
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".parlour-probe-")
    except OSError as err:
        raise ValueError(f"{refusal} ({_reason(err)})") from None
    os.close(fd)
    os.unlink(tmp)


def _probe_file(p: Path, label: str) -> None:
    """Open an existing file for appending (nothing is written, nothing truncated),
    and check that its folder takes new files (results are written atomically, by a
    temporary file and a rename)."""
    if not p.is_file():
        raise ValueError(f"{label} is not a regular file")
    try:
        fd = os.open(p, os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK)
    except OSError as err:
        raise ValueError(f"{label} is not writable ({_reason(err)})") from None
    os.close(fd)
    _probe_dir(p.parent, label, f"{label}: its folder {p.parent} is not writable")


def _reason(err: OSError) -> str:
    if err.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return "read-only or no permission"
    if err.errno == errno.ENOENT:  # /proc: a folder that exists but takes no files
        return "it takes no new files"
    return err.strerror or str(err)
