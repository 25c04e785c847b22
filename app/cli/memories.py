"""Memories through a running server: remember, search, list, show. The review queue of
held memories is review.py's, the audit trail audit.py's, sessions sessions.py's."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable, Mapping
from typing import Any

from app.cli.common import (
    Adder,
    Parents,
    client_of,
    limit_of,
    memory_ref,
    repository_here,
    say,
    written_here,
)
from app.cli.memory_lines import print_memory_line, review_mark, with_review
from app.client import ClientError
from app.domain.inputs.listing import MAX_LIST_LIMIT
from app.domain.inputs.memories import CONFIDENCES
from app.domain.inputs.search import MAX_SEARCH_LIMIT


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
    filters = {"limit": limit_of(args), "since": args.since, "until": args.until}
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
