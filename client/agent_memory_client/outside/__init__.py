"""What came from outside stays outside, within a session: provenance.py's rule across calls.

A call that puts someone else's files on disk (a clone of another's repository, a download,
a package fetched to look at, an archive unpacked from one of these) is remembered with
where the files landed and where they came from; a later read of a file under one of those
paths (a file tool's read, a search, `cat`, `grep`, `rg`, `sed` of it in the shell) is a
read of that outsider's text, its source the one they came from. So is a browser tool's
read of the page it last opened, when that page is off this machine.

One rule for the live hooks, which keep it in the session's state between hook calls
(loop/), and for the history import, which keeps it across one transcript
(history/capture.py). Listings are not reads (`ls`, `find`, `grep -l`: names, nobody's
words), nor is a path a command line builds that cannot be known from its text alone.
"""

from __future__ import annotations

from agent_memory_client.outside.landings import landings
from agent_memory_client.outside.paths import normal_path, too_broad, under
from agent_memory_client.outside.reads import shell_reads
from agent_memory_client.protocol import SOURCE_CHARS
from agent_memory_client.provenance import is_local, outsider

TYPE_CHECKING = False  # typing's import is a hook's cost: types are for mypy alone
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from agent_memory_client.loop import Event

MAX_PATHS = 20  # places a session remembers an outsider's files landed (the newest kept)
# What the session's state holds of them, which every hook reads and writes: a place longer
# than PATH_CHARS is kept as its longest folder within it (reads under the place are still
# under the folder: more held, never fewer); a source, as the server keeps one
# (protocol.SOURCE_CHARS); and the oldest places go first past OUTSIDE_CHARS in all.
PATH_CHARS = 1_024
OUTSIDE_CHARS = 8 * 1_024


class Outside:
    """What came from outside so far in one session: the places an outsider's files landed,
    each with where they came from (the newest MAX_PATHS, within OUTSIDE_CHARS), and the
    page a browser last opened. Kept in the hooks' state as `state()` says, read back from
    it as given (bounded again: a state file is no trusted input)."""

    __slots__ = ("page", "paths")

    def __init__(self, paths: object = None, page: object = None) -> None:
        given = paths if isinstance(paths, list) else []
        self.paths: list[tuple[str, str]] = []
        for kept in given[-MAX_PATHS:]:
            if isinstance(kept, (list, tuple)) and len(kept) == 2:
                self.remember(str(kept[0]), str(kept[1]), "")
        self.page = page[:SOURCE_CHARS] if isinstance(page, str) else ""

    def state(self) -> dict[str, Any]:
        return {"outside": [list(kept) for kept in self.paths], "page": self.page}

    def remember(self, path: str, source: str, cwd: str) -> None:
        """A place an outsider's files landed (the newest last), within the bounds; one
        too broad to call an outsider's is none."""
        place = within(path, PATH_CHARS)
        if too_broad(place, cwd):
            return
        others = [kept for kept in self.paths if kept[0] != place]
        newest = [*others, (place, source[:SOURCE_CHARS])][-MAX_PATHS:]
        total = 0
        for index in range(len(newest) - 1, -1, -1):
            total += len(newest[index][0]) + len(newest[index][1])
            if total > OUTSIDE_CHARS:
                newest = newest[index + 1 :]
                break
        self.paths = newest

    def read(self, event: Event, repository: str | None) -> list[str]:
        """The outsider sources `event` read (provenance.outsider's: the project's own site
        and repository left out), remembering what it put on disk or which page it opened."""
        found: list[str] = list(event.sources) if event.kind == "fetched" else []
        command, cwd = event.command, event.cwd
        if command and event.kind in ("fetched", "ran", "failed"):
            for source, path in landings(command, cwd, self.paths):
                if outsider([source], repository):
                    self.remember(path, source, cwd)
        if self.paths and command and event.kind in ("ran", "failed"):
            found += self.origins(shell_reads(command, cwd))
        if self.paths and (event.kind == "searched" or (event.kind == "read" and event.path)):
            found += self.origins([normal_path(event.path or ".", cwd)])
        if event.kind == "browsed" and event.path:
            # its read, if an outsider's, is the call's own source
            self.page = event.path[:SOURCE_CHARS]
        elif event.kind == "browsed" and self.page and not is_local(self.page):
            found.append(self.page)
        return outsider(dict.fromkeys(found), repository)

    def origins(self, paths: Iterable[str | None]) -> list[str]:
        """Where the files at `paths` came from, for those under a remembered place."""
        return [source for path in paths if path for at, source in self.paths if under(path, at)]


def within(path: str, chars: int) -> str:
    """`path`, or where it is longer than `chars`, its longest folder that is not ("" for
    none)."""
    if len(path) <= chars:
        return path
    cut = path[: chars + 1]
    return cut[: cut.rfind("/")] if "/" in cut else ""
