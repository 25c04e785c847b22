"""A past session replayed as the live hooks saw it, and its drafts: the fix tracker the
hooks run (drafting.py), the user's standing rules (instructions.py), the project's ways
(conventions.py), each with the untrusted input the session had read by then."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from agent_memory_client.drafting import Tracker, relative_path
from agent_memory_client.history import Found
from agent_memory_client.history.conventions import Conventions
from agent_memory_client.history.instructions import instructions_of
from agent_memory_client.provenance import outsider
from agent_memory_client.shell import plain, short

if TYPE_CHECKING:
    from agent_memory_client.history import Transcript

# A session's drafts of each kind, at most (the live hooks keep a session's newest three).
PER_SESSION = {"fix": 3, "instruction": 5}


def drafts_of(
    transcript: Transcript, top: str | None, repo: str = "", conventions: Conventions | None = None
) -> list[Found]:
    """What the session shows: its fixes (the newest few) and its user's rules (the first
    few); its commands go to `conventions`, its repository's (conventions_of() drafts them
    once all of a repository's sessions are read). `top`: the repository's top folder,
    which a changed file is named from (None: the session's folder)."""
    tracker = Tracker()
    fixes: list[Found] = []
    rules: list[Found] = []
    sources: list[str] = []
    for moment in transcript.moments:
        event, anchor = moment.event, moment.anchor
        if event.kind == "fetched":
            sources += [s for s in outsider(event.sources, repo) if s not in sources]
        elif event.kind in ("prompt", "answered") and not moment.sub:
            for rule in instructions_of(event.text, answer=event.kind == "answered"):
                same = next((r for r in rules if r.key == rule.key), None)
                if same is not None:  # said again (a queued prompt is recorded twice)
                    same.anchors.append(anchor)
                elif len(rules) < PER_SESSION["instruction"]:
                    rules.append(
                        Found(
                            "instruction",
                            rule.text,
                            [],
                            moment.at,
                            list(sources),
                            {"said": rule.said},
                            rule.key,
                            [anchor],
                            f"instruction:{rule.why}",
                        )
                    )
        elif event.kind == "failed":
            tracker.failed(event.command, event.text, anchor)
        elif event.kind == "edited":
            path = relative_path(event.path, transcript.cwd, top)
            if path:
                tracker.edited(path, event.change, anchor)
        elif event.kind == "ran":
            if conventions is not None:
                conventions.ran(event.command, anchor, transcript.cwd, transcript.session)
            draft = tracker.ran(event.command, anchor)
            if draft is not None:
                fixes.append(
                    Found(
                        "fix",
                        draft["text"],
                        draft["files"],
                        moment.at,
                        list(sources),
                        draft["evidence"],
                        draft["key"],
                        draft["anchors"],
                        f"fix:{draft['why']}",
                    )
                )
    return [*fixes[-PER_SESSION["fix"] :], *rules]


def conventions_of(conventions: Conventions, repo: str, seen_at: str) -> list[Found]:
    """A repository's conventions, from all of its sessions' commands."""
    return [
        Found(
            "convention",
            c.text,
            [],
            seen_at,
            [],
            c.evidence,
            c.key,
            c.anchors,
            f"convention:{c.why}",
        )
        for c in conventions.drafts(repo)
    ]


def one_each(
    found: Iterable[tuple[Transcript, str, Found]],
) -> Iterator[tuple[Transcript, str, Found]]:
    """Each lesson once: a draft whose (repository, kind, key or text) an earlier one had
    is passed over, across sessions."""
    seen: set[tuple[str, str, str]] = set()
    for transcript, repo, draft in found:
        key = (repo, draft.kind, draft.key or draft.text)
        if key not in seen:
            seen.add(key)
            yield transcript, repo, draft


# What a person's own agent is given to judge (history/distill.py): more than the rules
# draft, so that it can find what they cannot; bounded, so that a year of sessions fits a
# budget.
CANDIDATE_PROMPT_CHARS = 1_500
MIN_PROMPT_WORDS = 4
CANDIDATES_A_SESSION = 40


def candidates_of(
    transcript: Transcript, top: str | None, repo: str = "", conventions: Conventions | None = None
) -> list[Found]:
    """The moments of a session that may hold a lesson: what the rules drafted, every failure
    a pass ended (the task's own too), and every prompt and answer of the user's own words."""
    found = drafts_of(transcript, top, repo, conventions)
    known = {a for f in found for a in f.anchors}
    tracker = Tracker()
    for moment in transcript.moments:
        event = moment.event
        if event.kind == "failed":
            tracker.failed(event.command, event.text, moment.anchor)
        elif event.kind == "edited":
            path = relative_path(event.path, transcript.cwd, top)
            if path:
                tracker.edited(path, event.change, moment.anchor)
        elif event.kind == "ran":
            tracker.ran(event.command, moment.anchor)
        elif event.kind in ("prompt", "answered") and not moment.sub:
            said = plain(event.text).strip()
            if moment.anchor in known or len(said.split()) < MIN_PROMPT_WORDS:
                continue
            who = "The user answered" if event.kind == "answered" else "The user said"
            found.append(
                Found(
                    "instruction",
                    f"{who}: {short(said, CANDIDATE_PROMPT_CHARS)}",
                    [],
                    moment.at,
                    [],
                    {"said": said[:600]},
                    "",
                    [moment.anchor],
                    "candidate:said",
                )
            )
    for failure, passed, anchor in tracker.ended:
        if failure["anchors"][0] in known:
            continue
        error = failure["error"] or failure["tail"]
        text = f"`{failure['command']}` failed ({short(error, 300)}); later `{passed}` passed."
        found.append(
            Found(
                "fix",
                text,
                [e["path"] for e in failure["edits"]],
                "",
                [],
                {
                    "error": error[:600],
                    "failed": failure["command"],
                    "change": ", ".join(e["path"] for e in failure["edits"])[:600],
                    "command": passed[:200],
                },
                "",
                [*failure["anchors"], anchor],
                "candidate:ended",
            )
        )
    return found[:CANDIDATES_A_SESSION]
