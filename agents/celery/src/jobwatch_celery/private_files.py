"""The spool directory holds the app's task names, errors and tracebacks: the agent's alone.

Directories are created 0700 and files 0600 whatever the umask, and at start the tree is
tightened, so a spool written by an older version (0755, 0644) is fixed, as jobwatch does
with its data directory.
"""
from __future__ import annotations

import os
import stat
from typing import List

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
_SHARED_BITS = 0o077


def makedirs_private(directory: str) -> None:
    """`mkdir -p` whose new directories are all 0700 (a umask only takes bits away; os.makedirs
    gives its mode to the last directory only)."""
    path = os.path.abspath(directory)
    if os.path.isdir(path):
        return
    makedirs_private(os.path.dirname(path))
    try:
        os.mkdir(path, PRIVATE_DIR_MODE)
    except FileExistsError:
        if not os.path.isdir(path):
            raise


def open_private(path: str):
    """A file opened for binary writing that is 0600 afterwards, also when it existed with another mode."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE_MODE)
    try:
        os.fchmod(fd, PRIVATE_FILE_MODE)
    except OSError:
        os.close(fd)
        raise
    return os.fdopen(fd, "wb")


def tighten_private_tree(root: str) -> List[str]:
    """Removes group and other access from `root` and everything under it; lines for the log.

    Symbolic links are neither followed nor changed. A shared directory (sticky, such as
    /tmp) is left as it is: it is not the agent's to close.
    """
    changed: List[str] = []
    problems: List[str] = []

    def walk(path: str) -> None:
        try:
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                return
            mode = stat.S_IMODE(info.st_mode)
            if path == root and stat.S_ISDIR(info.st_mode) and mode & stat.S_ISVTX:
                problems.append(f"{root} is a shared directory (mode 0{mode:o}): its own mode is left as it is; give the agent a directory of its own")
            elif mode & _SHARED_BITS:
                os.chmod(path, mode & ~_SHARED_BITS)
                changed.append(f"{'.' if path == root else os.path.relpath(path, root)} 0{mode:o} -> 0{mode & ~_SHARED_BITS:o}")
            children = sorted(os.listdir(path)) if stat.S_ISDIR(info.st_mode) else []
        except FileNotFoundError:
            return
        except OSError as error:
            problems.append(f"could not tighten {path} ({error.strerror or error})")
            return
        for name in children:
            walk(os.path.join(path, name))

    walk(root)
    lines = []
    if changed:
        more = f", and {len(changed) - 10} more" if len(changed) > 10 else ""
        lines.append(f"removed group/other access from {len(changed)} path(s) under {root} (task names, errors and tracebacks are kept there): {', '.join(changed[:10])}{more}")
    return lines + problems[:10]
