"""A path as one spelling, whatever shell wrote it, and the places an outsider's files may
be remembered at (outside/)."""

from __future__ import annotations

import posixpath
import re

MIN_DEPTH = 2  # folders below a root a remembered place lies, at least (`/tmp` is not one)
# A Windows path as the shells on Windows write it: `C:\x`, `C:/x`, Git Bash's `/c/x`, WSL's
# `/mnt/c/x` (one drive, one spelling; case-blind).
_DRIVE = re.compile(r"^(?:/mnt)?/(?P<slash>[a-zA-Z])(?=/|$)|^(?P<colon>[a-zA-Z]):(?=/|$)")


def normal_path(path: str, cwd: str | None) -> str | None:
    """A path as one spelling: absolute (against `cwd`), `..` resolved, a Windows drive's
    path in its one form, lower case; None where it cannot be known from the text (a
    variable, a relative path without a folder)."""
    path = path.strip().replace("\\", "/")
    if not path or "$" in path or "`" in path:
        return None
    drive = _DRIVE.match(path)
    if drive:
        path = f"{(drive.group('slash') or drive.group('colon')).lower()}:{path[drive.end() :]}"
    elif not path.startswith(("/", "~")):
        base = normal_path(cwd, None) if cwd else None
        if base is None:
            return None
        path = f"{base}/{path}"
    path = posixpath.normpath(path)
    return path.casefold() if _DRIVE.match(path) else path


def under(path: str, place: str) -> bool:
    """`path` is `place` or inside it (a `*` of a place stands for what mktemp chose)."""
    from fnmatch import fnmatchcase

    parts, ours = path.split("/"), place.split("/")
    return len(parts) >= len(ours) and all(
        a == b or ("*" in b and fnmatchcase(a, b)) for a, b in zip(parts, ours, strict=False)
    )


def too_broad(path: str, cwd: str) -> bool:
    """A place too broad to call an outsider's: a root or a folder right below one, or the
    session's own folder or one above it (an archive unpacked into the repository)."""
    parts = [part for part in path.split("/") if part]
    rooted = bool(parts) and (parts[0] == "~" or parts[0].endswith(":"))
    if len(parts) - rooted < (1 if parts[:1] == ["~"] else MIN_DEPTH):
        return True
    here = normal_path(cwd, None) if cwd else None
    return here is not None and under(here, path)
