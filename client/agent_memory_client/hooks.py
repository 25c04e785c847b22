"""`agent-memory-client hook [--client CLIENT] EVENT`: one hook run. The client's adapter
(clients/) reads its JSON from stdin into the loop's events (loop/), the loop talks to the
server within one overall deadline, and the adapter writes the answer in the client's shape.
It always exits 0 and says in one line on stderr what happened: memory never blocks or
breaks the agent.
"""

from __future__ import annotations

import json
import time

from agent_memory_client.clients import CLIENTS
from agent_memory_client.connection import Connection, Deadline, Unavailable
from agent_memory_client.loop import KINDS, Answer, handle, keep_for_later, take_pending

# Each event's whole budget, interpreter start excluded (tens of ms). Claude Code cancels
# SessionEnd well before its timeout says (docs/benchmarks.md, "What a hook's start
# costs"); every client's hook timeout is 5 s.
# Every kind of the loop's has one: a second, but for these.
BUDGET_S = {**dict.fromkeys(KINDS, 1.0), "start": 2.5, "idle": 0.1}
HOOK_BUDGET_S = 3.0  # a hook of several events (Codex's Stop: stop, then end)


def run_hook(
    client: str, hook: str, raw: str, url: str | None = None, api_key: str | None = None
) -> tuple[str, str]:
    """(stdout, one line for stderr). Never raises: memory must not stop the agent."""
    began = time.monotonic()
    adapter = CLIENTS[client]
    try:
        payload = json.loads(raw) if raw.strip() else {}
        if not isinstance(payload, dict):
            raise ValueError("not a JSON object")
        events = adapter.events(hook, payload)
    except (ValueError, TypeError, AttributeError) as exc:
        return "", f"agent-memory hook {hook}: unreadable hook input ({exc})"
    answer = Answer()
    deadline = Deadline(HOOK_BUDGET_S)
    for event in events:
        budget = min(BUDGET_S[event.kind], deadline.left())
        try:
            got = handle(event, Connection(url, api_key, Deadline(budget)))
        except (Unavailable, KeyError, TypeError, ValueError, OSError) as exc:
            detail = exc.detail if isinstance(exc, Unavailable) else f"{type(exc).__name__}: {exc}"
            note = f"agent-memory unavailable ({detail}); continuing without memory"
            if event.kind == "start":  # the agent is told, once, why it has no memory
                answer.context = note
            answer.done = note
            break
        answer.context = "\n\n".join(part for part in (answer.context, got.context) if part)
        answer.reminder, answer.done = got.reminder or answer.reminder, got.done
        if got.reminder:  # the agent goes on: what would follow its stop does not happen
            break
    if events:
        last = events[-1]
        if hook in adapter.context_hooks:
            waiting = take_pending(last)
            answer.context = "\n\n".join(part for part in (waiting, answer.context) if part)
        elif answer.context and last.kind != "start":
            keep_for_later(last, answer.context)
            answer.context = ""
    out = adapter.render(hook, answer)
    took = time.monotonic() - began
    done = answer.done or "nothing to do"
    line = done if done.startswith("agent-memory") else f"agent-memory: {done} in {took:.2f} s"
    return (json.dumps(out) if out else ""), line
