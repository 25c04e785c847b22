"""Which repository a past session worked in, read from what its transcript records, for a
session whose folder is gone (a deleted worktree, another machine): never from a folder's
name.

A clue is what a command printed or the client recorded that names the repository:

- recorded: the client's own record of the session's repository (Codex's
  `session_meta.git.repository_url`, Copilot CLI's `session.start` context);
- pr-link: the pull request the session opened (Claude Code's `pr-link` entry);
- remote: `origin` in `git remote -v` (or `get-url`) output;
- push or fetch: `To <url>` / `From <url>` in git's output;
- pull request: the URL `gh pr create` printed.

Each has a weight; the repository with the most weight is the session's. A command that
ran somewhere else (`cd /other/place`, `git -C`) gives none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent_memory_client.git import normalise_remote

WEIGHTS = {
    "recorded": 10,
    "pr-link": 6,
    "push": 4,
    "remote": 4,
    "pull request": 4,
    "gh output": 3,
    "gh --repo": 2,
    "other": 1,
    "prompt": 1,
}

_REMOTE_LINE = re.compile(r"^(?P<name>\S+)\s+(?P<url>\S+)\s+\((?:fetch|push)\)\s*$", re.M)
_PUSHED = re.compile(
    r"^(?:To|From)\s+(?P<url>(?:https?://|ssh://|git@)\S+|[\w.-]+\.[a-z]{2,}:[\w.-]+/[\w.-]+?)\s*$",
    re.M,
)
_CONFIG_URL = re.compile(r"^remote\.origin\.url=(?P<url>\S+)\s*$", re.M)
_GH_REPO = re.compile(r"\bgh\s+\w+(?:\s+\S+)*?\s+(?:--repo|-R)[ =](?P<repo>[\w.-]+/[\w.-]+)")
_GH_URL = re.compile(r"https?://github\.com/(?P<path>[\w.-]+/[\w.-]+)/(?:pull|issues|actions)/")
_PR_URL = re.compile(
    r"https?://(?P<host>github\.com|gitlab\.com)/(?P<path>[\w.-]+/[\w.-]+)/(?:pull|-/merge_requests)/\d+"
)
_ELSEWHERE = re.compile(r"(?:^|[;&|]\s*)cd\s+(?:[/~]|[A-Za-z]:)|\bgit\s+-C\s")
_GIT_URL = re.compile(r"^(?:https?://|ssh://|git@)\S+$")


@dataclass(frozen=True, slots=True)
class Clue:
    how: str  # one of WEIGHTS
    repository: str  # owner/name
    anchor: str  # the moment that shows it


def named(url: str) -> str | None:
    url = url.strip().rstrip("/")
    if re.match(r"^[\w.-]+\.[a-z]{2,}:[\w.-]+/", url):  # host:owner/name, git's short form
        url = f"git@{url}"
    found = normalise_remote(url)
    return found[1] if found else None


def recorded(url: object, anchor: str) -> list[Clue]:
    """The repository a client recorded for the session (a URL or `owner/name`)."""
    if not isinstance(url, str) or not url.strip():
        return []
    name = named(url) if _GIT_URL.match(url.strip()) else url.strip()
    return [Clue("recorded", name, anchor)] if name and "/" in name else []


def pr_link(repository: object, url: object, anchor: str) -> list[Clue]:
    if isinstance(repository, str) and "/" in repository:
        return [Clue("pr-link", repository.strip(), anchor)]
    found = _PR_URL.search(url) if isinstance(url, str) else None
    return [Clue("pr-link", found.group("path"), anchor)] if found else []


def clues_in(command: str, output: str, anchor: str) -> list[Clue]:
    """What a shell command's output says of the repository it ran in."""
    if _ELSEWHERE.search(command) or not output:
        return []
    found: list[Clue] = []
    text = output[:20_000]
    if re.search(r"\bgit\s+remote\b|\bremote\.\S+\.url\b", command):
        for line in _REMOTE_LINE.finditer(text):
            name = named(line.group("url"))
            if name:
                found.append(
                    Clue("remote" if line.group("name") == "origin" else "other", name, anchor)
                )
        if "get-url" in command or "remote.origin.url" in command:
            first = text.strip().splitlines()[0] if text.strip() else ""
            name = named(first) if _GIT_URL.match(first.strip()) else None
            found += [Clue("remote", name, anchor)] if name else []
    if re.search(r"\bgit\b", command):  # a push, a fetch, or a commit whose hook pushed
        for pushed in _PUSHED.finditer(text):
            name = named(pushed.group("url"))
            found += [Clue("push", name, anchor)] if name else []
        for config in _CONFIG_URL.finditer(text):
            name = named(config.group("url"))
            found += [Clue("remote", name, anchor)] if name else []
    given = _GH_REPO.search(command)
    if re.search(r"\bgh\s+pr\s+create\b", command) and not given:
        for url in _PR_URL.finditer(text):
            found.append(Clue("pull request", url.group("path"), anchor))
    elif re.search(r"\bgh\s", command) and not given:  # gh of the folder's own repository
        paths = dict.fromkeys(m.group("path") for m in _GH_URL.finditer(text))
        found += [Clue("gh output", p, anchor) for p in list(paths)[:1]]
    if given:
        found.append(Clue("gh --repo", given.group("repo"), anchor))
    return found


def clues_in_prompt(prompt: str, anchor: str) -> list[Clue]:
    """A pull request, an issue or a CI run of a repository the user links to."""
    paths = dict.fromkeys(m.group("path") for m in _GH_URL.finditer(prompt[:20_000]))
    return [Clue("prompt", p, anchor) for p in list(paths)[:1]]


def repository_from(clues: list[Clue]) -> tuple[str | None, list[Clue]]:
    """The repository the clues name with most weight, and the clues that name it."""
    weights: dict[str, int] = {}
    for clue in clues:
        weights[clue.repository] = weights.get(clue.repository, 0) + WEIGHTS[clue.how]
    if not weights:
        return None, []
    best = max(weights, key=lambda name: (weights[name], -_first(clues, name)))
    return best, [c for c in clues if c.repository == best]


def _first(clues: list[Clue], name: str) -> int:
    return next(i for i, c in enumerate(clues) if c.repository == name)
