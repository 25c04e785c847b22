"""Which tool calls bring into a session text that someone other than the user, their
repository and their own tools wrote: the one rule, for every client, the live hooks and
the history import alike (docs/security.md, "Memory that a web page cannot teach").

A session that made one is recorded as having read untrusted input, with its sources
(`POST /sessions/{id}/sources`): a memory written while it is open waits for a person.

Outsider reads:
- **web tools**, by each client's name for them; the source is the URL (a search:
  `search:<query>`);
- **another MCP server's reads**: a tool of a server the installer did not write (ours.py:
  by the name it wrote, not by a word in a name) whose name does not say it writes. A
  browser's navigation to a page off this machine is one (its source is the URL), and so is
  every later read of that page (its text, a snapshot, a script's answer: browser_page(),
  which outside/ follows across the session); driving the user's own dev server on
  localhost is not;
- **shell commands that fetch**: a downloader (protocol.FETCH_PROGRAMS) given a URL off this
  machine, or `gh` reading what others wrote: `issue`/`pr`/`release`/`gist` view, list or
  diff, `search`, `api` with GET (its default without fields);
- **what came from outside, read later**: a file a clone, a download or an unpacked archive
  put on disk, read by a file tool, a search or the shell (outside/: the session
  remembers where such files landed);
- **a subagent's report**, where its own calls are not in the transcript (a background
  agent's): one briefed to use a web tool (brief_sources()).

Not outsider reads: the client's own question tool (the user's own words), this server's
tools, a fetch of localhost (the user's own app), `gh` writes (`pr create`, `merge`,
`checks`, `edit`, `comment`, `release create`), git's own fetches (the repository's own
remote) and a clone of the session's own repository, an MCP write (creating an issue
answers with what the agent wrote), a listing of names (`ls`, `find`, `grep -l`).
"""

from __future__ import annotations

import re

from agent_memory_client.ours import our_servers
from agent_memory_client.protocol import FETCH_PROGRAMS, TOOL_NAMES
from agent_memory_client.shell import program_name, segments, unwrapped

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

# Web tools by client: Claude Code, Gemini CLI, Codex, Copilot CLI, OpenCode, Cursor.
WEB_TOOLS = frozenset(
    {
        "WebFetch",
        "WebSearch",
        "web_fetch",
        "google_web_search",
        "web_search",
        "webfetch",
        "websearch",
        "codesearch",
        "fetch",
        "web_search_call",
    }
)
# A client's own tool that asks the user: its answer is the user's own words.
QUESTION_TOOLS = frozenset({"AskUserQuestion", "ask_user", "request_user_input"})
# An MCP tool's name: Claude Code and Codex `mcp__<server>__<tool>`, Gemini CLI
# `mcp_<server>_<tool>` (where its hook names the server apart, that name is taken).
_MCP_NAME = re.compile(
    r"^mcp__(?P<server>.+?)__(?P<tool>.+)$|^mcp_(?P<gserver>[^_]+)_(?P<gtool>.+)$"
)
# A tool whose name says it writes (create_issue, update_page, mark_chapter): what it
# answers is what the agent sent. Anything else of another server is taken as a read.
_WRITES = re.compile(
    r"^(?:create|update|delete|remove|add|set|post|send|write|edit|mark|dismiss|spawn|close"
    r"|assign|archive|comment|upload|save|submit|move|rename|label|link|unlink|merge|resize"
    r"|type|click|press|hover|drag|select|fill|wait|handle|install|stop|start)"
    r"(?:[_-]|$)",
    re.IGNORECASE,
)
_BROWSER = re.compile(r"browser|playwright|puppeteer|chrome|chromium|selenium", re.IGNORECASE)
# A browser tool that manages the browser (its window, its tabs, a preview server), not a page.
_BROWSER_ONLY = re.compile(
    r"^(?:browser_)?(?:resize|close|install|tabs?_|preview_(?:stop|logs))", re.IGNORECASE
)
_URL = re.compile(r"\b(?:https?|ftp|ssh|git)://[^\s'\"<>`|;&)\]]+", re.IGNORECASE)
_LOCAL_NAMES = ("localhost", "host.docker.internal")
_LOCAL_SUFFIXES = (".localhost", ".local", ".internal", ".test")
# gh's commands that read what others wrote, by group (None: every verb of it).
_GH_READS: dict[str, frozenset[str] | None] = {
    "issue": frozenset({"view", "list"}),
    "pr": frozenset({"view", "list", "diff"}),
    "release": frozenset({"view", "list", "download"}),
    "gist": frozenset({"view", "list", "clone"}),
    "discussion": frozenset({"view", "list"}),
    "repo": frozenset({"view", "clone"}),
    "run": frozenset({"view"}),
    "search": None,
}
# What gh can print that people wrote (`--json` without one of these is numbers and names).
_WRITTEN_FIELDS = frozenset(
    {
        "body",
        "comments",
        "reviews",
        "title",
        "description",
        "readme",
        "latestreviews",
        "commits",
        "messages",
        "log",
        "files",
    }
)
# A package registry's text: advisories, another package's readme.
_REGISTRY_READS = {
    "npm": frozenset({"audit", "view", "info", "show", "docs"}),
    "pnpm": frozenset({"audit", "view", "info"}),
    "yarn": frozenset({"audit", "info", "npm"}),
    "bun": frozenset({"audit", "info"}),
    "pip": frozenset({"download", "index"}),
}
# Hosts that tunnel to the user's own machine (ngrok and its kin): their own app.
_TUNNELS = (
    ".ngrok-free.app",
    ".ngrok.io",
    ".ngrok.app",
    ".ngrok-free.dev",
    ".trycloudflare.com",
    ".loca.lt",
    ".localhost.run",
)
# A command substitution's inside is a command too (`n=$(gh pr view --json number)`).
SUBSTITUTION = re.compile(r"\$\(|`|\)")
_GH_FIELDS = ("-f", "-F", "--field", "--raw-field", "--input")
MAX_SOURCES = 10  # of one tool call
OWN_WORD_CHARS = 6  # a word of the repository's name this long names its site


def is_local(url: str) -> bool:
    """A URL of this machine or its private network: the user's own app, not an outsider."""
    import ipaddress  # here: a hook pays for every import, and most never need it
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url if "://" in url else f"http://{url}")
        host = (parts.hostname or "").lower()
    except ValueError:
        return False
    if not host or host in _LOCAL_NAMES or host.endswith(_LOCAL_SUFFIXES + _TUNNELS):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_unspecified


def outside_urls(text: str) -> list[str]:
    found = dict.fromkeys(u.rstrip(".,") for u in _URL.findall(text))
    return [u for u in found if not is_local(u)][:MAX_SOURCES]


def mcp_parts(name: str) -> tuple[str, str] | None:
    """(server, tool) of an MCP tool's name, or None for a client's own tool."""
    found = _MCP_NAME.match(name)
    if not found:
        return None
    server = found.group("server") or found.group("gserver") or ""
    return server, found.group("tool") or found.group("gtool") or ""


def is_own_tool(name: str, server: str = "", ours: frozenset[str] | None = None) -> bool:
    """A tool of this server: one of its names, under a server name the installer wrote;
    where the client names no server (Cursor's), one of its names."""
    parts = mcp_parts(name)
    if parts is not None:
        server, name = server or parts[0], parts[1]
    if name not in TOOL_NAMES:
        return False
    return not server or server in (ours if ours is not None else our_servers())


def gh_read(args: list[str]) -> str | None:
    """What `gh ARGS` read that others wrote, as a source; None for a write or own work."""
    positional = [a for a in args if not a.startswith("-")]
    if not positional:
        return None
    group, verb = positional[0], (positional[1] if len(positional) > 1 else "")
    if group == "api":
        method = next(
            (args[i + 1].upper() for i, a in enumerate(args[:-1]) if a in ("-X", "--method")),
            None,
        )
        posts = any(a in _GH_FIELDS or a.startswith(("--field=", "--raw-field=")) for a in args)
        if (method or ("POST" if posts else "GET")) != "GET":
            return None
        return f"gh api {verb}".strip()
    if group not in _GH_READS:
        return None
    verbs = _GH_READS[group]
    if verbs is not None and verb not in verbs:
        return None
    fields = _json_fields(args)
    if fields is not None and not fields & _WRITTEN_FIELDS:
        return None  # numbers, states and names only: nobody's words
    urls = outside_urls(" ".join(args))
    return urls[0] if urls else " ".join(["gh", *positional[:3]])


def _json_fields(args: list[str]) -> set[str] | None:
    """The fields `gh ... --json a,b` asks for; None when it prints the whole thing."""
    for i, arg in enumerate(args):
        if arg == "--json" and i + 1 < len(args):
            return {f.strip().lower() for f in args[i + 1].split(",")}
        if arg.startswith("--json="):
            return {f.strip().lower() for f in arg[len("--json=") :].split(",")}
    return None


# A repository's address as git takes it in scp's form (`git@host:owner/name.git`).
_SCP = re.compile(r"^[\w.-]+@(?P<host>[\w.-]+):(?P<path>[^/\s][^\s]*)$")


def clone_source(address: str) -> str | None:
    """A repository's address off this machine, as a source (scp's form as `ssh://`); None
    for a path or the user's own machine."""
    scp = _SCP.match(address)
    if scp:
        address = f"ssh://{scp.group('host')}/{scp.group('path')}"
    found = outside_urls(address) if "://" in address else []
    return found[0] if found else None


def command_sources(command: str) -> list[str]:
    """The outsider sources a shell command read: the URLs off this machine a downloader
    was given, or what `gh` read that others wrote; none for any other command."""
    sources: list[str] = []
    for found in segments(SUBSTITUTION.sub(" ; ", command)):
        _, words = unwrapped(found)
        program = program_name(words[0]).lower() if words else ""
        positional = [w for w in words[1:] if not w.startswith("-")]
        if program in FETCH_PROGRAMS:
            sources += outside_urls(" ".join(words[1:]))
        elif program == "gh":
            read = gh_read(words[1:])
            sources += [read] if read else []
        elif program == "git" and positional[:1] == ["clone"]:
            cloned = next((clone_source(w) for w in positional[1:] if clone_source(w)), None)
            sources += [cloned] if cloned else []  # another's repository
        elif positional[:1] and positional[0] in _REGISTRY_READS.get(program, ()):
            sources.append(" ".join(["registry:", program, *positional[:2]]).replace(": ", ":"))
    return list(dict.fromkeys(sources))[:MAX_SOURCES]


def tool_sources(
    tool: str,
    tool_input: dict[str, Any],
    server: str = "",
    mcp: bool = False,
    ours: frozenset[str] | None = None,
) -> list[str]:
    """The outsider sources one tool call read; none for a tool that reads nothing from
    outside. `server`: the MCP server, where the client names it apart (Gemini CLI's
    mcp_context); `mcp`: the call is an MCP tool's whatever its name (Cursor's
    afterMCPExecution, whose names carry no prefix); `ours`: this server's names (default:
    what the installer recorded, ours.py)."""
    if tool in QUESTION_TOOLS:
        return []
    if tool in WEB_TOOLS:
        return _web_sources(tool, tool_input)
    parts = mcp_parts(tool)
    if not (mcp or server or parts):
        return []
    if is_own_tool(tool, server, ours):
        return []
    named = server  # the client names the server apart (Gemini CLI)
    name = parts[1] if parts else tool
    server = server or (parts[0] if parts else "")
    if _BROWSER.search(server) or name.startswith("browser_"):
        return _browser_sources(tool_input)
    if _WRITES.match(name):
        return []
    return [f"tool:{named}/{tool}" if named else f"tool:{tool}"]


def _web_sources(tool: str, tool_input: dict[str, Any]) -> list[str]:
    url = tool_input.get("url") or tool_input.get("uri")
    if isinstance(url, str) and url:
        return [] if is_local(url) else [url]
    said = tool_input.get("query") or tool_input.get("prompt")
    if isinstance(said, str) and said:
        named = _URL.findall(said)
        if named:
            return outside_urls(said)
        return [f"search:{said}"]
    return [f"tool:{tool}"]


def _browser_sources(tool_input: dict[str, Any]) -> list[str]:
    """A browser's navigation to a page off this machine is a read of it; one to the user's
    own dev server is not, nor is driving a page already open (its navigation said where)."""
    url = tool_input.get("url") or tool_input.get("uri")
    if isinstance(url, str) and url:
        return [] if is_local(url) else [url]
    return []


def browser_page(
    tool: str,
    tool_input: dict[str, Any],
    server: str = "",
    mcp: bool = False,
    ours: frozenset[str] | None = None,
) -> str | None:
    """What a browser tool's call did to the page (tool_sources()'s arguments): the URL it
    opened, or "" for a read of the page already open (its text, a snapshot, a script's
    answer, a screenshot; an action's answer shows the page too); None for a tool of no
    browser's, or one that manages the browser alone (its window, its tabs). Whose text the
    page is, the URL that opened it says (outside/ remembers it across the session)."""
    parts = mcp_parts(tool)
    if not (mcp or server or parts) or is_own_tool(tool, server, ours):
        return None
    name = parts[1] if parts else tool
    if not (_BROWSER.search(server or (parts[0] if parts else "")) or name.startswith("browser_")):
        return None
    url = tool_input.get("url") or tool_input.get("uri")
    if isinstance(url, str) and url:
        return url
    return None if _BROWSER_ONLY.match(name) else ""


# A web tool named in a subagent's brief (not `fetch`, a word of prose as often as a tool).
_WEB_TOOL_NAMES = sorted((t for t in WEB_TOOLS if "web" in t.lower()), key=len, reverse=True)
_WEB_TOOL_NAMED = re.compile(rf"\b(?:{'|'.join(_WEB_TOOL_NAMES)})\b")


def brief_sources(brief: str, title: str = "") -> list[str]:
    """What a subagent read from outside, by its brief, where its own calls are not in the
    transcript (a background agent's): one told to use a web tool reports what the web
    said: the URLs its brief names, else the subagent by its title. One that is not told
    to read nothing by this rule: a brief that names a URL is as often work on it (an issue
    to fix) as a read of it."""
    if not _WEB_TOOL_NAMED.search(brief):
        return []
    return outside_urls(brief) or [f"subagent:{' '.join(title.split())[:100]}"]


def own_site(source: str, repository: str | None) -> bool:
    """A source on the project's own site (its docs, its deployments): a host that names
    the repository's owner, the repository's name, or a long word of it
    (`ohmyposh.dev` for oh-my-posh, `planetfall-...vercel.app` for planetfall-seed-signalkit).
    Its text is the project's own, as its repository's is."""
    if not repository or "/" not in repository:
        return False
    if source.startswith(("gh repo view ", "gh repo clone ", "registry:")):  # its own, its package
        named = source.split()[-1].lower().lstrip("@")
        if named == repository.lower():
            return True
        flat = re.sub(r"[^a-z0-9]", "", named.split("/")[0])
    elif "://" in source:
        from urllib.parse import urlsplit

        try:
            parts = urlsplit(source)
            host = (parts.hostname or "").lower()
        except ValueError:
            return False
        path = [p for p in parts.path.split("/") if p]
        if len(path) == 2 and f"{path[0]}/{path[1].removesuffix('.git')}".lower() == (
            repository.lower()
        ):
            return True  # its own repository: a clone of it, its front page
        flat = re.sub(r"[^a-z0-9]", "", host)
    else:
        return False
    owner, name = [part.lower() for part in repository.rsplit("/", 2)[-2:]]
    words = [re.sub(r"[^a-z0-9]", "", w) for w in re.split(r"[-_.]", name)]
    names = {re.sub(r"[^a-z0-9]", "", owner), re.sub(r"[^a-z0-9]", "", name)}
    names |= {w for w in words if len(w) >= OWN_WORD_CHARS}
    return any(len(n) >= 4 and n in flat for n in names)


def outsider(sources: Iterable[str], repository: str | None) -> list[str]:
    """The sources that are an outsider's, the project's own site left out."""
    return [s for s in sources if not own_site(s, repository)]
