"""The memory loop, once for every client: what happens at each moment of an agent's
session, over normalized events (clients/ turns each client's hook input into these and
their answers into its output).

- start: opens a memory session for the repository (git.py's name) with HEAD, the branch and
  the commits since the repository's last session with the files each changed (so that the
  server marks only memories written before a file's change), and hands over the snapshot
  and the capture guidance.
- prompt, failed: recall (the few memories that bear on the prompt, or on the failed
  command's last error lines), gated and budgeted by the server, never one already handed.
- read, edited: the memories whose `files` name that file, once per file a session; an edit
  after a failure is noted for a draft.
- ran: a command that passed; the same command that failed before, after a change, becomes
  a draft the service screens and keeps beside the session (never a memory).
- fetched: a tool brought content from outside the repository and the user (a web page,
  another MCP server's tool, a download: provenance.py says which): the session records
  its sources, once each, and a memory written while it is open waits for a person. What
  came from outside stays outside (outside/): where a call put an outsider's files, and
  the page a browser opened, are kept in the session's state, and a later read of them (a
  read, a search, browsed, a shell command's) is recorded as theirs.
- stop: keeps the turn's last words, and once a session reminds the agent to capture what it
  learned, with the session's drafts.
- end: closes the session with the agent's last words (abandoned when it said nothing).

Context that an event's hook cannot hand over (a client whose prompt hook takes no context)
waits in the session's state for the next hook that can.

The moments and the answer are events.py's; the session's state between hooks, one
declared type, state.py's; start, stop and end session.py's; recall on a prompt, a failure
and a file recall.py's; a fix's draft and the untrusted sources records.py's; what the
loop says to the agent words.py's.
"""

from __future__ import annotations

from agent_memory_client.loop.events import KINDS, READS_OUTSIDE, Answer, Event
from agent_memory_client.loop.recall import edited, failed, prompt, read
from agent_memory_client.loop.records import SOURCES_A_CALL, fetched, ran
from agent_memory_client.loop.session import end, start, stop
from agent_memory_client.loop.state import keep_for_later, take_pending
from agent_memory_client.loop.words import CAPTURE_REMINDER

TYPE_CHECKING = False  # typing's import is a hook's cost: types are for mypy alone
if TYPE_CHECKING:
    from agent_memory_client.connection import Connection

__all__ = [
    "CAPTURE_REMINDER",
    "KINDS",
    "SOURCES_A_CALL",
    "Answer",
    "Event",
    "handle",
    "keep_for_later",
    "take_pending",
]


def handle(event: Event, server: Connection) -> Answer:
    if event.kind in READS_OUTSIDE:  # recorded first: it holds whatever follows
        fetched(event, server)
    return HANDLERS[event.kind](event, server)


def idle(event: Event, server: Connection) -> Answer:
    return Answer()


HANDLERS = {
    "start": start, "prompt": prompt, "failed": failed, "ran": ran, "read": read,
    "edited": edited, "fetched": fetched, "searched": fetched, "browsed": fetched, "stop": stop,
    "end": end, "idle": idle,
}  # fmt: skip
