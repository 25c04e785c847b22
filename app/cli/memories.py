"""Commands that use a running server through the typed client: remember, search, list,
show, review, audit, hook."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from app.cli.common import (
    Adder,
    CommandError,
    Parents,
    api_key_of,
    client_of,
    memory_id,
    memory_ref,
    repository_here,
    say,
    session_id,
    written_here,
)
from app.client import ClientError
from app.domain.audit import MAX_AUDIT_PAGE
from app.domain.inputs import CONFIDENCES, MAX_LIST_LIMIT, MAX_SEARCH_LIMIT
from app.domain.memory import Memory
from app.domain.provenance import reasons_of, sources_of, unreviewed
from app.domain.sessions import MAX_SESSION_PAGE
from app.domain.text import cut, one_line


def register(command: Adder, parents: Parents) -> None:
    client, shown, filters = parents.client, parents.shown, parents.filters
    remember = command("remember", "record a learning in a running server", [client])
    remember.add_argument("text", help="the learning: a rule in 3 words or more")
    remember.add_argument(
        "--source-repo",
        dest="source_repo",
        help="the repository it is about (default: the git repository here, as owner/name"
        " from its origin remote; AGENT_MEMORY_REPO overrides)",
    )
    remember.add_argument(
        "--global",
        dest="global_",
        action="store_true",
        help="file it under no repository: it then reaches every repository's sessions",
    )
    remember.add_argument(
        "--type",
        dest="memory_type",
        help="what it is (decision, error_pattern, code_pattern, anti_pattern, learning, ...;"
        " inferred from the text if unset)",
    )
    remember.add_argument(
        "--tags", help="comma-separated tags (with --type or --tags, stored as given)"
    )
    remember.add_argument("--category", help="filed under (inferred from the text if unset)")
    remember.add_argument("--context", help="the task or situation the learning came from")
    remember.add_argument("--name", help="a title (the first line if unset)")
    remember.add_argument("--reasoning", help="why it holds")
    remember.add_argument("--confidence", choices=CONFIDENCES, help="low if unset")
    remember.add_argument(
        "--personal",
        action="store_true",
        help="yours alone: only your keys (and their agents) are ever handed it",
    )
    remember.set_defaults(func=cmd_remember)

    window = parents.time_window
    search = command("search", "search memories (hybrid ranking)", [client, filters, window, shown])
    search.add_argument("query", help="what to look for")
    search.set_defaults(func=cmd_search, max_limit=MAX_SEARCH_LIMIT)
    listing = command("list", "the newest memories", [client, filters, window, shown])
    listing.set_defaults(func=cmd_list, max_limit=MAX_LIST_LIMIT)
    show = command("show", "one memory, whole", [client, shown])
    show.add_argument("memory_id", help="the memory's id, or enough of its start to be one")
    show.set_defaults(func=cmd_show)

    review = command(
        "review",
        "the memories held for a person's review, with their sources, or approve one (admin key)",
        [client, shown],
    )
    review.add_argument(
        "action", nargs="?", choices=["list", "approve"], default="list", help="what to do"
    )
    review.add_argument("memory_id", nargs="?", help="the memory to approve")
    review.set_defaults(func=cmd_review)

    audit = command(
        "audit", "the audit trail, newest first, or --undo (admin key)", [client, shown]
    )
    audit.add_argument("--memory", help="only entries about this memory id")
    audit.add_argument("--action", help="only this action (edit, prune, undo, ...)")
    audit.add_argument("--since", help="only entries from this time on (2026-11-01, 7d, ...)")
    audit.add_argument(
        "--limit", type=int, default=50, help=f"at most this many (1 to {MAX_AUDIT_PAGE})"
    )
    audit.add_argument("--undo", metavar="ENTRY_ID", help="undo this entry instead of listing")
    audit.set_defaults(func=cmd_audit, max_limit=MAX_AUDIT_PAGE)

    sessions = command("sessions", "recent sessions, or end or delete one", [client, shown])
    sessions.add_argument(
        "action", nargs="?", choices=["list", "end", "delete"], default="list", help="what to do"
    )
    sessions.add_argument("session_id", nargs="?", help="the session (end, delete)")
    sessions.add_argument("--source-repo", dest="source_repo", help="only this repository's")
    sessions.add_argument("--limit", type=int, default=20, help="at most this many (1 to 100)")
    sessions.add_argument(
        "--status",
        choices=["completed", "failed", "abandoned"],
        default="completed",
        help="how it ended (end)",
    )
    sessions.add_argument("--summary", help="what was done (end)")
    sessions.set_defaults(func=cmd_sessions, max_limit=MAX_SESSION_PAGE)

    hook = command("hook", "a Claude Code hook (JSON on stdin); never fails the agent", [client])
    hook.add_argument(
        "event", choices=["session-start", "stop", "session-end"], help="the hook event"
    )
    hook.set_defaults(func=cmd_hook)


def _limit(args: argparse.Namespace) -> int:
    """The range named before the server is asked (the server refuses it the same way)."""
    if not 1 <= args.limit <= args.max_limit:
        raise CommandError(
            f"agent-memory {args.command}: --limit must be 1 to {args.max_limit}, not {args.limit}"
        )
    limit: int = args.limit
    return limit


def cmd_remember(args: argparse.Namespace) -> int:
    """Record a learning in a running server, and say where it was filed. With --type or
    --tags it is stored as given (POST /memories); else the server infers its type."""
    fields = {f: getattr(args, f) for f in ("category", "name")}
    fields |= {"confidence": args.confidence, "context": args.context}
    fields |= written_here(args)
    if args.personal:
        fields["personal"] = True
    with client_of(args) as memory:
        if args.memory_type or args.tags:
            tags = [t.strip() for t in (args.tags or "").split(",") if t.strip()]
            metadata = {"reasoning": args.reasoning} if args.reasoning else {}
            given = {k: v for k, v in fields.items() if v is not None}
            answer = as_person(lambda trust: memory.store(
                args.text, memory_type=args.memory_type or "learning", tags=tags,
                metadata=metadata, **given, **trust,
            ))  # fmt: skip
            stored = answer["memory"]
            message = f"{answer['status'].capitalize()}: {stored['memory_type']} {stored['id']}"
        else:
            reasoning = args.reasoning
            answer = as_person(
                lambda trust: memory.remember(args.text, reasoning=reasoning, **fields, **trust)
            )
            stored, message = answer["memory"], answer["message"]
    personal = "; personal: only your keys are handed it" if stored.get("personal") else ""
    print(f"{message}; {filed_where(stored.get('source_repo'))}{personal}")
    return 0


# What an agent client sets in the environment of the shell commands its agent runs (seen
# in Claude Code 2.1.332, Codex 0.171.0, Gemini CLI 0.61.0 and Copilot CLI 1.0.102; Cursor's
# as it documents).
AGENT_SHELL_MARKERS = (
    "AI_AGENT", "CLAUDECODE", "CODEX_THREAD_ID", "GEMINI_CLI", "CURSOR_AGENT", "COPILOT_CLI",
)  # fmt: skip


def run_by_an_agent(env: Mapping[str, str]) -> bool:
    """This command runs in an agent's shell: what it writes is the agent's, whatever key
    the person's environment hands it (a page the agent read may have asked for it)."""
    return any(env.get(name) for name in AGENT_SHELL_MARKERS)


def as_person(write: Callable[[dict[str, str]], Any]) -> Any:
    """A note a person writes from the shell is theirs: the console's rule for a person's
    own words (Principal.own_words_trust), `user` where the key may vouch for them (never
    held because an agent session of its repository read a page), else an agent's. The
    server knows the key's role and the CLI does not, so it asks for `user` and, refused
    for exactly that (403 naming trust_level only: an agent's key), writes it again as an
    agent's; any other refusal (a reader's key, a bad field) is the answer. Run by an
    agent (run_by_an_agent()), it writes as an agent's at once."""
    if run_by_an_agent(os.environ):
        return write({})
    try:
        return write({"trust_level": "user"})
    except ClientError as exc:
        if exc.status != 403 or exc.fields != ["trust_level"]:
            raise
        return write({})


def filed_where(repo: str | None) -> str:
    """Where a write went: its repository, or global (every repository's sessions)."""
    if repo is None:
        return "global: every repository's sessions see it"
    return f"filed under {json.dumps(repo, ensure_ascii=False)}"


def cmd_hook(args: argparse.Namespace) -> int:
    """A Claude Code hook: its JSON on stdin, its answer on stdout; always exit 0."""
    from agent_memory_client.hooks import run_hook

    out, note = run_hook("claude-code", args.event, sys.stdin.read(), args.url, api_key_of(args))
    if out:
        print(out)
    say(note)
    return 0


@dataclass(frozen=True, slots=True)
class Shown:
    """What provenance.unreviewed() reads of a memory (its held_at and provenance), from a
    memory as the server answers it: the rule is the domain's, applied once."""

    held_at: str | None
    provenance: dict[str, Any] | None

    @property
    def held(self) -> bool:
        return self.held_at is not None


def review_of(memory: dict[str, Any]) -> tuple[bool, bool]:
    """(held, unreviewed): held for a person's review, or written after untrusted input and
    not approved (app/domain/provenance.py unreviewed(); a held one is both)."""
    shown = Shown(memory.get("held_at"), memory.get("provenance"))
    return shown.held, unreviewed(cast(Memory, shown))


SOURCE_SHOWN_CHARS = 60


def review_mark(memory: dict[str, Any]) -> str:
    """A held or unreviewed memory's mark, `[held: read "https://..." +1]` (the first source
    its session read, quoted: a page's address is data, never this listing's structure), or
    the reason it is held (`[held: tells an agent to run downloaded code]`); "" for any
    other."""
    held, unchecked = review_of(memory)
    if not unchecked:
        return ""
    state = "held" if held else "unreviewed"
    sources = sources_of(memory.get("provenance"))
    if sources:
        first = json.dumps(cut(sources[0], SOURCE_SHOWN_CHARS), ensure_ascii=False)
        more = f" +{len(sources) - 1}" if len(sources) > 1 else ""
        return f"[{state}: read {first}{more}]"
    reasons = reasons_of(memory.get("provenance"))
    return f"[{state}: {reasons[0]}]" if reasons else f"[{state}]"


def with_review(memory: dict[str, Any]) -> dict[str, Any]:
    """A memory as --json prints it: the server's fields, and `held` and `unreviewed`."""
    held, unchecked = review_of(memory)
    return {**memory, "held": held, "unreviewed": unchecked}


def print_memory_line(memory: dict[str, Any], score: float | None = None) -> None:
    """One memory on one line: its id, type, where it is filed (its repository, or
    `global`), the start of its text, and its review mark when it is held or unreviewed."""
    lead = f"{score:5.3f}  " if score is not None else ""
    kind = memory["memory_type"][:14]
    where = cut(memory.get("source_repo") or "global", 24)
    text = cut(one_line(memory["content"]), 70)
    mark = review_mark(memory)
    print(f"{lead}{memory['id']}  {kind:14}  {where:24}  {text}{f'  {mark}' if mark else ''}")


def cmd_search(args: argparse.Namespace) -> int:
    def nothing(answer: dict[str, Any]) -> str:
        # Weaker matches left out: "no good match", since some memories came near.
        return "no good match" if answer.get("below_floor") else "no memories match"

    return _show(args, "results", lambda hit: print_memory_line(hit["memory"], hit["score"]),
                 nothing, lambda hit: {**hit, "memory": with_review(hit["memory"])})  # fmt: skip


def cmd_list(args: argparse.Namespace) -> int:
    return _show(args, "memories", print_memory_line, lambda _: "no memories", with_review)


def _show(
    args: argparse.Namespace,
    key: str,
    line: Callable[[dict[str, Any]], None],
    nothing: Callable[[dict[str, Any]], str],
    as_json: Callable[[dict[str, Any]], dict[str, Any]],
) -> int:
    """What a search or a list read here (JSON, each item as `as_json` makes it, or a line
    each), and when it is nothing, where it looked and what the other repositories hold."""
    answer, repo, elsewhere = _read_here(args, key)
    if args.json:
        shown = {**answer, key: [as_json(item) for item in answer[key]]}
        print(json.dumps(shown, indent=2, ensure_ascii=False))
        return 0
    for item in answer[key]:
        line(item)
    if not answer[key]:
        say(f"{nothing(answer)} in {searched_where(repo)}{found_elsewhere(elsewhere, args.limit)}")
    return 0


def _read_here(
    args: argparse.Namespace, found: str
) -> tuple[dict[str, Any], str | None, list[Any]]:
    """A search's or a list's answer for the repository here (repository_here), and, when
    it holds nothing and is not every repository's, what the same request finds in all."""
    filters = {"limit": _limit(args), "since": args.since, "until": args.until}
    repo = repository_here(args)
    with client_of(args) as memory:

        def read(source_repo: str | None) -> dict[str, Any]:
            if args.command == "search":
                types = [args.type] if args.type else None
                answer: dict[str, Any] = memory.search(
                    args.query, source_repo=source_repo, memory_type=types, **filters
                )
            else:
                answer = memory.list(source_repo=source_repo, memory_type=args.type, **filters)
            return answer

        here = read(repo)
        if here[found] or repo is None or args.json:
            return here, repo, []
        return here, repo, read(None)[found]


def found_elsewhere(found: list[Any], limit: int) -> str:
    """What the same request finds in the other repositories, said after "nothing here"."""
    if not found:
        return ""
    more = "+" if len(found) >= limit else ""
    return f"; {len(found)}{more} in other repositories: --any-repo shows them"


def searched_where(repo: str | None) -> str:
    """Which memories a search or list read: said, since the default depends on the folder."""
    if repo is None:
        return "every repository"
    return f"{json.dumps(repo, ensure_ascii=False)} and the global memories (--any-repo: all)"


def cmd_show(args: argparse.Namespace) -> int:
    wanted = memory_ref(args.memory_id)
    with client_of(args) as memory:
        item = memory.get(wanted)
    if args.json:
        print(json.dumps(with_review(item), indent=2, ensure_ascii=False))
        return 0
    if mark := review_mark(item):
        print(mark)  # before the text: what it says is not yet vouched for
    print(item["content"])
    print()
    # What it is first, then every other field that has a value, in the server's order.
    first = ("memory_type", "category", "tags", "source_repo", "trust_level", "pinned")
    for label in first:
        print(f"{label:>19}: {item[label]}")
    for label, value in item.items():
        if label not in (*first, "content") and value not in (None, "", [], {}):
            print(f"{label:>19}: {value}")
    return 0


def cmd_review(args: argparse.Namespace) -> int:
    """What waits for a person (app/domain/provenance.py), or a person's approval of one:
    handed over unasked to every later session from then on."""
    if args.action == "approve":
        if not args.memory_id:
            raise CommandError("agent-memory review approve: which memory? (its id)")
        with client_of(args) as memory:
            approved = memory.approve(memory_id(args.memory_id))
        print(f"approved {approved['id']}: handed over unasked from now on")
        return 0
    with client_of(args) as memory:
        held = memory.held()
    if args.json:
        print(json.dumps(held, indent=2, ensure_ascii=False))
        return 0
    for item in held:
        print_memory_line(item)
        provenance = item.get("provenance") or {}
        for reason in provenance.get("reasons") or []:
            print(f"    why: {reason}")
        for source in provenance.get("sources") or []:
            # Shown as data: quoted, so that no source can pose as this listing's lines.
            print(f"    read: {json.dumps(source, ensure_ascii=False)}")
    if not held:
        say("nothing waits for review")
    return 0


def cmd_sessions(args: argparse.Namespace) -> int:
    if args.action != "list" and not args.session_id:
        raise CommandError(f"agent-memory sessions {args.action}: which session? (its id)")
    with client_of(args) as memory:
        if args.action == "end":
            answer = memory.end_session(
                session_id(args.session_id), args.status, summary=args.summary
            )
        elif args.action == "delete":
            memory.delete_session(session_id(args.session_id))
            print(f"deleted session {args.session_id}")
            return 0
        else:
            answer = memory.sessions(source_repo=args.source_repo, limit=_limit(args))
    if args.json or args.action == "end":
        print(json.dumps(answer, indent=2, ensure_ascii=False))
        return 0
    for item in answer:
        what = " · ".join(p for p in (item.get("agent"), item.get("task")) if p)
        print(
            f"{item['started_at'][:16]}  {item['id']}  {item['status']:9}"
            f"  {item.get('source_repo') or '-'}  {what}"
        )
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    """The tenant's audit trail, newest first; or undo one entry (admin key)."""
    with client_of(args) as memory:
        if args.undo:
            answer = memory.undo(args.undo)
        else:
            answer = memory.audit(
                memory_id=args.memory, action=args.action, since=args.since, limit=_limit(args)
            )
    if args.json:
        print(json.dumps(answer, indent=2, ensure_ascii=False))
        return 0
    if args.undo:
        restored = ", ".join(m["id"] for m in answer["memories"])
        print(f"undone: {args.undo} (entry {answer['undo']['id']}; restored {restored})")
        return 0
    for entry in answer:
        who = entry["actor_key"] or "open/service"
        targets = ",".join(entry["memory_ids"][:3])
        more = f" +{len(entry['memory_ids']) - 3}" if len(entry["memory_ids"]) > 3 else ""
        undone = f" (undone by {entry['undone_by']})" if entry["undone_by"] else ""
        print(
            f"{entry['at'][:19]}  {entry['id']}  {entry['action']:10} {entry['actor_role']:6}"
            f" {who}  {targets}{more}{undone}"
        )
    return 0
