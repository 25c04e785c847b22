"""A TOML configuration file (Codex's config.toml) with our tables in one marked block,
which uninstall takes out again even after Codex rewrote the file its own way."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_memory_client.install.entries import Change, InstallError

TOML_BEGIN = "# >>> agent-memory ({tag}): written by `agent-memory-client install codex`"
TOML_END = "# <<< agent-memory ({tag})"


@dataclass(frozen=True, slots=True)
class TomlBlock:
    """Codex's config.toml: our tables in one marked block at its end (TOML tables may
    stand anywhere), removed by uninstall. `body` makes them, given the rest of the file
    as TOML reads it.

    Codex rewrites the file its own way (0.171): `codex mcp add` drops the comment that
    opens our block and puts its table before the one that closes it; `codex features
    enable` puts `[features]` inside the block. So uninstall takes out our tables (`ours`
    says which, given its key path, its value and whether it stands between our markers)
    and our markers, never another table, and checks that TOML then reads the file as it
    did without ours."""

    path: Path
    tag: str  # which block: the MCP server, or the trust of one hooks.json
    body: Callable[[dict[str, Any]], Change]
    ours: Callable[[tuple[str, ...], Any, bool], bool] = lambda path, value, marked: False

    def check(self, text: str | None) -> None:
        self.rest(text)

    def installed(self, text: str | None) -> Change:
        rest, document = self.rest(text)
        change = self.body(document)
        if not change.text:
            return Change(rest if text is not None else "", change.server, change.notes)
        begin, end = self.markers()
        after = f"{rest}\n{begin}\n{change.text}{end}\n"
        try:
            tomllib.loads(after)
        except tomllib.TOMLDecodeError as exc:
            raise InstallError(
                f"{self.path} cannot take our tables ({exc}; its own define them otherwise):"
                f" add them yourself:\n{change.text}"
            ) from exc
        return Change(after, change.server, change.notes)

    def uninstalled(self, text: str) -> Change:
        span = self.span(text)
        try:
            document = tomllib.loads(text)
        except tomllib.TOMLDecodeError:  # rest() says what is wrong with it
            return Change(text if span is None else text[: span[0]] + text[span[1] :])
        lines = text.splitlines(keepends=True)
        tables = self.our_tables(lines, document)
        if span is not None:  # the block as install wrote it, nothing else put in it since
            starts = [sum(map(len, lines[:at])) for at, _, _ in tables]
            inside = [path for (_, _, path), at in zip(tables, starts, strict=True)
                      if span[0] <= at < span[1]]  # fmt: skip
            cut = text[: span[0]] + text[span[1] :]
            if toml_read(cut) == toml_without(document, inside):
                return self.uninstalled(cut)  # and what stands elsewhere
        markers = {at for at, line in enumerate(lines) if line.rstrip("\r\n") in self.markers()}
        ours = markers.union(*(range(start, end) for start, end, _ in tables))
        for cut_at, paths in ((ours, [path for _, _, path in tables]), (markers, [])):
            after = cut_lines(lines, cut_at)
            if toml_read(after) == toml_without(document, paths):
                return Change(after)
        return Change(text)

    def markers(self) -> tuple[str, str]:
        return TOML_BEGIN.format(tag=self.tag), TOML_END.format(tag=self.tag)

    def span(self, text: str) -> tuple[int, int] | None:
        """Where our block is in `text` (from the line break before it), if it is whole."""
        begin_line, end_line = self.markers()
        begin = text.find(f"\n{begin_line}\n")
        end = text.find(f"\n{end_line}\n", begin) if begin >= 0 else -1
        if begin >= 0 and end < 0 and text.endswith(f"\n{end_line}"):
            end = len(text) - len(end_line) - 1
        return None if end < 0 else (begin, end + len(end_line) + 2)

    def our_tables(
        self, lines: list[str], document: dict[str, Any]
    ) -> list[tuple[int, int, tuple[str, ...]]]:
        """Our tables: the lines each stands on (from its header to its last key), and
        its key path."""
        begin, end = self.markers()
        marked, between = set(), False
        for at, line in enumerate(lines):
            between = (between or line.rstrip("\r\n") == begin) and line.rstrip("\r\n") != end
            if between:
                marked.add(at)
        return [
            (start, stop, path)
            for start, stop, path in toml_tables(lines)
            if path and self.ours(path, toml_value(document, path), start in marked)
        ]

    def our_servers(self, text: str | None) -> set[str]:
        """Our MCP servers in it (one the user wrote, their own way, is theirs to remove)."""
        lines = (text or "").splitlines(keepends=True)
        try:
            document = tomllib.loads(text or "")
        except tomllib.TOMLDecodeError:
            return set()
        found = self.our_tables(lines, document)
        return {path[1] for _, _, path in found if path[0] == "mcp_servers" and len(path) == 2}

    def rest(self, text: str | None) -> tuple[str, dict[str, Any]]:
        """The file without our tables, and what TOML reads of it."""
        rest = self.uninstalled(text or "").text
        try:
            return rest, tomllib.loads(rest)
        except tomllib.TOMLDecodeError as exc:
            raise InstallError(f"{self.path} is not TOML ({exc}): fix it, then again") from exc


def toml_tables(lines: list[str]) -> list[tuple[int, int, tuple[str, ...] | None]]:
    """Each table of a TOML file: the lines from its header to its last key (a comment or
    a blank line after that belongs to what follows), and its key path (None: an array of
    tables)."""
    headers: list[tuple[int, tuple[str, ...] | None]] = []
    for at, line in enumerate(lines):
        if not line.lstrip().startswith("["):
            continue
        try:
            found: Any = tomllib.loads(line)
        except tomllib.TOMLDecodeError:
            continue  # a line of a value, not a header
        keys: list[str] = []
        while isinstance(found, dict) and len(found) == 1:
            key, found = next(iter(found.items()))
            keys.append(key)
        headers.append((at, tuple(keys) if found == {} else None))
    tables = []
    for index, (at, path) in enumerate(headers):
        stop = headers[index + 1][0] if index + 1 < len(headers) else len(lines)
        while stop > at + 1 and lines[stop - 1].strip()[:1] in ("", "#"):
            stop -= 1
        tables.append((at, stop, path))
    return tables


def toml_value(document: dict[str, Any], path: tuple[str, ...]) -> Any:
    found: Any = document
    for key in path:
        found = found.get(key) if isinstance(found, dict) else None
    return found


def toml_without(document: dict[str, Any], paths: list[tuple[str, ...]]) -> str:
    """What TOML should read once `paths` are gone, as toml_read() says it."""
    copy = json.loads(json.dumps(document, default=str))
    for path in paths:
        parent = toml_value(copy, path[:-1])
        if isinstance(parent, dict):
            parent.pop(path[-1], None)
    return json.dumps(toml_pruned(copy), sort_keys=True)


def toml_read(text: str) -> str | None:
    """What TOML reads of `text`, to compare (empty tables not told apart)."""
    try:
        document = json.loads(json.dumps(tomllib.loads(text), default=str))
    except tomllib.TOMLDecodeError:
        return None
    return json.dumps(toml_pruned(document), sort_keys=True)


def toml_pruned(value: Any) -> Any:
    if isinstance(value, dict):
        kept = {k: toml_pruned(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v != {}}
    if isinstance(value, list):
        return [toml_pruned(v) for v in value]
    return value


def cut_lines(lines: list[str], cut: set[int]) -> str:
    """`lines` without those at `cut`; a blank line that would then follow another (or
    start the file) goes too."""
    kept: list[str] = []
    for at, line in enumerate(lines):
        if at in cut:
            continue
        if not line.strip() and at - 1 in cut and (not kept or not kept[-1].strip()):
            continue
        kept.append(line)
    return "".join(kept)


def toml_string(value: str) -> str:
    return json.dumps(value)  # a TOML basic string is written as JSON writes one
