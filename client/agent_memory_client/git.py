"""Which repository the work is in, and what git knows of it cheaply: used by the hooks, the
CLI and the MCP bridge so that all three file memories under the same name.

The name: AGENT_MEMORY_REPO; else the `origin` remote as `owner/name` (ssh or https, with
or without `.git`, any host; the host is kept only when another remote has the same
`owner/name` on another host); else the git top level's directory name; outside a work
tree, the working directory's name. Every git call is bounded in time, and a failure is
"unknown", never an error.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

GIT_TIMEOUT_S = 0.5
MAX_CHANGED_FILES = 500
MAX_HISTORY_COMMITS = 100

# git@host:owner/name(.git), ssh://git@host[:port]/owner/name(.git),
# https://host/owner/name(.git), and the same with deeper paths (GitLab groups).
_SCP = re.compile(r"^[\w.-]+@(?P<host>[^:/]+):(?P<path>.+)$")
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://(?:[^@/]+@)?(?P<host>[^/:]+)(?::\d+)?/(?P<path>.+)$")


def normalise_remote(url: str) -> tuple[str, str] | None:
    """(host, owner/name) of a remote URL, or None for a local path or an unknown form."""
    url = url.strip()
    match = _SCP.match(url) or _URL.match(url)
    if not match:
        return None
    path = match.group("path").strip("/")
    path = path.removesuffix(".git").removesuffix("/")
    if "/" not in path:
        return None
    return match.group("host").lower(), path


def _git(cwd: str | Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip()


def repository_name(cwd: str | Path | None, from_env: bool = True) -> str | None:
    """`from_env`: AGENT_MEMORY_REPO names it, when set (not for a past session's folder)."""
    return _named(cwd, top_level(cwd) if cwd else None, from_env)


def _named(cwd: str | Path | None, top: str | None, from_env: bool = True) -> str | None:
    """The repository's name, given the work tree's top folder (None: outside one)."""
    if from_env and (named := os.environ.get("AGENT_MEMORY_REPO")):
        return named.strip() or None
    if not cwd:
        return None
    if not top:
        return Path(cwd).resolve().name or None  # outside git: the folder's own name
    remotes: dict[str, tuple[str, str]] = {}
    for line in (_git(top, "remote", "-v") or "").splitlines():
        parts = line.split()
        if len(parts) >= 2 and (found := normalise_remote(parts[1])):
            remotes.setdefault(parts[0], found)
    if "origin" in remotes:
        host, path = remotes["origin"]
        collides = any(p == path and h != host for n, (h, p) in remotes.items() if n != "origin")
        return f"{host}/{path}" if collides else path
    return Path(top).name or None


def top_level(cwd: str | Path | None) -> str | None:
    """The work tree's top folder: what a memory's `files` are relative to."""
    return _git(cwd, "rev-parse", "--show-toplevel") or None if cwd else None


class GitState:
    __slots__ = ("branch", "commit", "repository", "top")

    def __init__(
        self,
        repository: str | None,
        commit: str | None,
        branch: str | None,
        top: str | None = None,
    ) -> None:
        self.repository = repository
        self.commit = commit  # HEAD; None in a repository with no commit
        self.branch = branch  # None on a detached HEAD
        self.top = top  # the work tree's top folder; None outside one

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GitState) and (
            (self.repository, self.commit, self.branch)
            == (other.repository, other.commit, other.branch)
        )

    def __repr__(self) -> str:
        return f"GitState({self.repository!r}, {self.commit!r}, {self.branch!r})"


def git_state(cwd: str | Path | None) -> GitState:
    """The repository, HEAD, its branch and the top folder, git's top level asked once."""
    top = top_level(cwd) if cwd else None
    commit, branch = _head(top) if top else (None, None)
    return GitState(_named(cwd, top), commit, branch, top)


def head_of(cwd: str | Path | None) -> tuple[str | None, str | None]:
    """(HEAD's commit, its branch): what moves during a session, where the repository's
    name does not."""
    if not cwd or _git(cwd, "rev-parse", "--is-inside-work-tree") != "true":
        return None, None
    return _head(cwd)


def _head(work_tree: str | Path) -> tuple[str | None, str | None]:
    commit = _git(work_tree, "rev-parse", "--verify", "--quiet", "HEAD") or None
    branch = _git(work_tree, "symbolic-ref", "--quiet", "--short", "HEAD") or None
    return commit, branch


def changed_files(cwd: str | Path, since: str, until: str) -> list[str] | None:
    """The files changed between two commits (at most MAX_CHANGED_FILES), or None when git
    cannot tell (an unknown commit: a rewritten history, a shallow clone)."""
    listed = _git(cwd, "diff", "--name-only", "--no-renames", f"{since}..{until}", "--")
    if listed is None:
        return None
    return [line for line in listed.splitlines() if line][:MAX_CHANGED_FILES]


def history(cwd: str | Path, since: str, until: str) -> list[dict[str, object]] | None:
    """The commits after `since` up to `until`, newest first, each with the files it
    changed: what lets the server tell a memory written after a file's last change from one
    written before it. None when git cannot tell, or the history is longer than
    MAX_HISTORY_COMMITS (the caller then sends the changed files alone)."""
    listed = _git(
        cwd, "log", "--format=%x00%H", "--name-only", "--no-renames",
        f"-n{MAX_HISTORY_COMMITS + 1}", f"{since}..{until}", "--",
    )  # fmt: skip
    if listed is None:
        return None
    commits: list[dict[str, object]] = []
    for block in listed.split("\0")[1:]:
        lines = [line for line in block.splitlines() if line]
        if lines:
            commits.append({"commit": lines[0], "files": lines[1 : MAX_CHANGED_FILES + 1]})
    return commits if len(commits) <= MAX_HISTORY_COMMITS else None
