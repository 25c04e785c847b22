"""A past session replayed as the live hooks saw it, and its drafts: the fix tracker the
hooks run (drafting/), the user's standing rules (instructions.py), the project's ways
(conventions.py), each with the untrusted input the session had read by then."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, TypeVar

from agent_memory_client.drafting import Tracker, relative_path
from agent_memory_client.history import Found, Moment
from agent_memory_client.history.conventions import Conventions
from agent_memory_client.history.instructions import instructions_of
from agent_memory_client.outside import Outside
from agent_memory_client.protocol import EVIDENCE_CHARS
from agent_memory_client.shell import plain, short

if TYPE_CHECKING:
    from agent_memory_client.drafting.tracker import Failure
    from agent_memory_client.history import Transcript

T = TypeVar("T")  # where a draft comes from: a session, as the import or a bench names it
# A session's drafts of each kind, at most (the live hooks keep a session's newest three).
PER_SESSION = {"fix": 3, "instruction": 5}


def drafts_of(
    transcript: Transcript, top: str | None, repo: str = "", conventions: Conventions | None = None
) -> list[Found]:
    """What the session shows: its fixes (the newest few) and its user's rules (the first
    few); its commands go to `conventions`, its repository's (conventions_of() drafts them
    once all of a repository's sessions are read). `top`: the repository's top folder,
    which a changed file is named from (None: the session's folder)."""
    return _read(transcript, top, repo, conventions, candidates=False)


def candidates_of(
    transcript: Transcript, top: str | None, repo: str = "", conventions: Conventions | None = None
) -> list[Found]:
    """The moments of a session that may hold a lesson, for the person's own agent to judge
    (distill.py): what the rules drafted, every failure a pass ended (the task's own too),
    and every prompt and answer of the user's own words; in the one pass drafts_of() makes."""
    return _read(transcript, top, repo, conventions, candidates=True)[:CANDIDATES_A_SESSION]


def outsider_reads(transcript: Transcript, repo: str) -> Iterator[tuple[Moment, list[str]]]:
    """Each moment of a session with the outsider sources it read: provenance.py's rule, and
    what came from outside remembered across the session (outside/) as the live hooks
    remember it across their calls."""
    outside = Outside()
    for moment in transcript.moments:
        yield moment, outside.read(moment.event, repo or None)


def _read(
    transcript: Transcript,
    top: str | None,
    repo: str,
    conventions: Conventions | None,
    candidates: bool,
) -> list[Found]:
    tracker = Tracker()
    fixes: list[Found] = []
    rules: list[Found] = []
    more: list[Found] = []  # candidates: what the rules did not draft
    sources: list[str] = []
    for moment, read in outsider_reads(transcript, repo):
        event, anchor = moment.event, moment.anchor
        sources += [s for s in read if s not in sources]
        if event.kind in ("prompt", "answered") and not moment.sub:
            found = _rules(rules, event.text, event.kind == "answered", moment.at, anchor, sources)
            if candidates and not found:
                more += _said(event.kind, event.text, moment.at, anchor, sources)
        elif event.kind == "failed":
            tracker.failed(event.command, event.text, anchor)
        elif event.kind == "edited":
            path = relative_path(event.path, transcript.cwd, top)
            if path:
                tracker.edited(path, event.change, anchor)
        elif event.kind == "ran":
            if conventions is not None:
                conventions.ran(event.command, anchor, transcript.cwd, transcript.session)
            ended = len(tracker.ended)
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
            elif candidates and len(tracker.ended) > ended:
                more.append(_ended(*tracker.ended[-1], moment.at, sources))
    if candidates:
        return [*fixes, *rules, *more]
    return [*fixes[-PER_SESSION["fix"] :], *rules]


def _rules(
    rules: list[Found], said: str, answer: bool, at: str, anchor: str, sources: list[str]
) -> bool:
    """The user's standing rules in what they said, added to `rules` (each once, the first
    few); whether it held one."""
    found = instructions_of(said, answer=answer)
    for rule in found:
        same = next((r for r in rules if r.key == rule.key), None)
        if same is not None:  # said again (a queued prompt is recorded twice)
            same.anchors.append(anchor)
        elif len(rules) < PER_SESSION["instruction"]:
            rules.append(
                Found(
                    "instruction",
                    rule.text,
                    [],
                    at,
                    list(sources),
                    {"said": rule.said},
                    rule.key,
                    [anchor],
                    f"instruction:{rule.why}",
                )
            )
    return bool(found)


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


def one_each(found: Iterable[tuple[T, str, Found]]) -> Iterator[tuple[T, str, Found]]:
    """Each lesson once: a draft whose (repository, kind, key or text) an earlier one had
    is passed over, across sessions."""
    seen: set[tuple[str, str, str]] = set()
    for origin, repo, draft in found:
        key = (repo, draft.kind, draft.key or draft.text)
        if key not in seen:
            seen.add(key)
            yield origin, repo, draft


# What a person's own agent is given to judge (history/distill.py): more than the rules
# draft, so that it can find what they cannot; bounded, so that a year of sessions fits a
# budget.
CANDIDATE_PROMPT_CHARS = 1_500
MIN_PROMPT_WORDS = 4
CANDIDATES_A_SESSION = 40


def _said(kind: str, text: str, at: str, anchor: str, sources: list[str]) -> list[Found]:
    """A prompt or an answer of the user's own that holds no rule the rules read: a
    candidate, when it says enough."""
    said = plain(text).strip()
    if len(said.split()) < MIN_PROMPT_WORDS:
        return []
    who = "The user answered" if kind == "answered" else "The user said"
    return [
        Found(
            "instruction",
            f"{who}: {short(said, CANDIDATE_PROMPT_CHARS)}",
            [],
            at,
            list(sources),
            {"said": said[:EVIDENCE_CHARS]},
            "",
            [anchor],
            "candidate:said",
        )
    ]


def _ended(failure: Failure, passed: str, anchor: str, at: str, sources: list[str]) -> Found:
    """A failure a pass ended that the rules draft nothing of (the task's own, most often):
    a candidate."""
    error = failure["error"] or failure["tail"]
    return Found(
        "fix",
        f"`{failure['command']}` failed ({short(error, 300)}); later `{passed}` passed.",
        [e["path"] for e in failure["edits"]],
        at,
        list(sources),
        {
            "error": error[:EVIDENCE_CHARS],
            "failed": failure["command"],
            "change": ", ".join(e["path"] for e in failure["edits"])[:EVIDENCE_CHARS],
            "command": passed[:EVIDENCE_CHARS],
        },
        "",
        [*failure["anchors"], anchor],
        "candidate:ended",
    )
