"""The repository a past session worked in, in this order:

1. the person's own map, `--map PATH=owner/name`: a session whose folder is PATH or under
   it (a worktree root maps every worktree beneath it; the longest prefix wins);
2. the folder itself, where it still is a git work tree: its origin, as the hooks name it;
3. what the transcript records (clues.py): a client's record, a pull request's link, git's
   remote or push output.

Never a folder's name: a session none of these names is left out, with the reason.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from agent_memory_client.git import repository_name, top_level
from agent_memory_client.history.clues import clues_in_prompt, repository_from

if TYPE_CHECKING:
    from agent_memory_client.history import Transcript

NO_FOLDER = (
    "its folder is gone and its transcript names no repository (map it: --map PATH=owner/name)"
)
NO_GIT = (
    "its folder is in no git repository and its transcript names none (map it: --map"
    " PATH=owner/name)"
)
NO_CWD = (
    "its transcript records no folder and names no repository (map its file's folder:"
    " --map PATH=owner/name)"
)
_OWNER_NAME = re.compile(r"^[\w.-]+/[\w.-]+(?:/[\w.-]+)*$")


def folder_key(path: str) -> str:
    """A folder as a prefix compares: forward slashes, no trailing one, a Windows drive's
    letter and case folded (`D:\\Code\\x` and `d:/code/x/` are one)."""
    key = path.strip().replace("\\", "/").rstrip("/")
    if re.match(r"^[A-Za-z]:", key):
        key = key.lower()
    return key


def checkout_of(cwd: str) -> str:
    """The main checkout's folder of a worktree's, else the folder itself (as a key)."""
    key = folder_key(cwd)
    found = _WORKTREE.match(key)
    return found.group("base") if found else key


def parse_maps(values: list[str]) -> dict[str, str]:
    """`PATH=owner/name` pairs, as the person gave them; a bad one raises ValueError."""
    maps: dict[str, str] = {}
    for value in values:
        path, sep, name = value.rpartition("=")
        if not sep or not path.strip() or not _OWNER_NAME.match(name.strip()):
            raise ValueError(f"--map takes PATH=owner/name, not {value!r}")
        maps[folder_key(os.path.expanduser(path))] = name.strip()
    return maps


# A worktree's folder beside or under its main checkout: `cli/.worktrees/1`,
# `agentv__worktrees/x`, `agentv.worktrees/x`: the checkout's repository is the worktree's.
_WORKTREE = re.compile(r"^(?P<base>.+?)(?:/\.worktrees|__worktrees|\.worktrees)(?:/.*)?$")


class Namer:
    """Names sessions' repositories, asking git once per folder. What a session's transcript
    names is learned for its folder: another session of that folder, or of a worktree of
    it, is named alike (`learned`)."""

    def __init__(self, maps: dict[str, str] | None = None) -> None:
        self.maps = maps or {}
        self.learned: dict[str, str] = {}
        self._folders: dict[str, tuple[str | None, str | None]] = {}

    def mapped(self, cwd: str) -> str | None:
        key = folder_key(cwd)
        matches = [p for p in self.maps if key == p or key.startswith(p + "/")]
        return self.maps[max(matches, key=len)] if matches else None

    def folder(self, cwd: str) -> tuple[str | None, str | None]:
        """(repository, top folder) of a folder that is a git work tree here."""
        if cwd not in self._folders:
            top = top_level(cwd) if cwd and os.path.isdir(cwd) else None
            found = repository_name(cwd, from_env=False) if top else None
            # Outside git, repository_name() names the folder: that is no repository's.
            self._folders[cwd] = (found, top) if top else (None, None)
        return self._folders[cwd]

    def checkouts(self) -> dict[str, str]:
        """The git work trees the sessions asked about ran in, each with its repository (top
        folder: owner/name): where the files their agents read are."""
        return {top: repo for repo, top in self._folders.values() if repo and top}

    def name(self, transcript: Transcript) -> tuple[str | None, str | None, str]:
        """(repository, top folder, why none) of a session."""
        cwd = transcript.cwd
        # A transcript that records no folder (Cursor's) is mapped by where the file is.
        mapped = self.mapped(cwd or str(transcript.path.parent))
        if mapped:
            top = top_level(cwd) if cwd and os.path.isdir(cwd) else None
            return mapped, top, ""
        repo, top = self.folder(cwd) if cwd else (None, None)
        if repo is not None:
            return repo, top, ""
        said = [  # a pull request, an issue or a CI run the user links to, in any client
            c
            for m in transcript.moments
            if m.event.kind == "prompt" and not m.sub
            for c in clues_in_prompt(m.event.text, m.anchor)
        ]
        named, _ = repository_from([*transcript.clues, *said])
        if named is not None:
            if cwd:
                self.learned.setdefault(checkout_of(cwd), named)
            return named, None, ""
        known = self.learned.get(checkout_of(cwd)) if cwd else None
        if known is not None:
            return known, None, ""
        if not cwd:
            return None, None, NO_CWD
        return None, None, NO_GIT if os.path.isdir(cwd) else NO_FOLDER
