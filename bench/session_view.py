"""A real agent session, condensed for a person who labels it (bench/data/capture_labels/).

    .venv/bin/python -m bench.session_view ../shared/data/sessions/OWNER__REPO/ID.jsonl.gz
        [--full] [--calls] [--from N] [--to N]

Each line is one moment, numbered, with the anchor a label names it by: a tool call's own
id (`toolu_...`, `call_...`), a message's id, or `L<line>` (the physical line of the
file) where the format has none. It reads the six formats of the development corpus
(Claude Code, Codex, Gemini CLI, OpenCode, Copilot CLI, Cursor) with its own small parser,
on purpose apart from the product's readers: a label must see what the product misses
(a subagent's calls, a second shell tool, a question's answer).

Prompts and answers are printed whole (up to 8,000 characters), a call's input on one
line, a result's first and last lines; `--full` prints results whole. Nothing is written.
"""

from __future__ import annotations

import argparse
import gzip
import json
import signal
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROMPT_CHARS = 8_000
INPUT_CHARS = 400
RESULT_LINES = 8


@dataclass
class Line:
    anchor: str
    kind: str  # PROMPT, ASK, SAY, CALL, OK, ERR, SUB, META
    text: str
    sub: bool = False  # inside a subagent


def open_text(path: Path) -> str:
    raw = path.read_bytes()
    return (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode("utf-8", "replace")


def _json_lines(text: str) -> Iterator[tuple[int, Any]]:
    for number, line in enumerate(text.splitlines(), start=1):
        try:
            yield number, json.loads(line)
        except ValueError:
            continue


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict):
                parts.append(str(block.get("text") or block.get("content") or ""))
            elif isinstance(block, str):
                parts.append(block)
        return "\n".join(p for p in parts if p)
    if isinstance(content, dict):
        return str(content.get("text") or content.get("output") or json.dumps(content))
    return ""


def _one_line(value: Any, limit: int = INPUT_CHARS) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _excerpt(text: str, full: bool) -> str:
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    if full or len(lines) <= RESULT_LINES:
        return "\n".join(lines)
    half = RESULT_LINES // 2
    return "\n".join(
        [*lines[:half], f"... ({len(lines) - RESULT_LINES} lines) ...", *lines[-half:]]
    )


# Claude Code ---------------------------------------------------------------------------


def claude_code(text: str, full: bool) -> Iterator[Line]:
    names: dict[str, str] = {}
    for number, entry in _json_lines(text):
        if not isinstance(entry, dict):
            continue
        kind = entry.get("type")
        if kind == "pr-link":
            yield Line(f"L{number}", "META", f"pr-link {entry.get('prUrl')}")
            continue
        if kind == "summary" or entry.get("isCompactSummary"):
            yield Line(f"L{number}", "META", "compaction summary")
            continue
        data = entry.get("data")
        if kind == "progress" and isinstance(data, dict) and isinstance(data.get("message"), dict):
            inner = data["message"]
            message = inner.get("message")
            if isinstance(message, dict):
                wrapped = {"type": inner.get("type"), "message": message, "uuid": inner.get("uuid")}
                for line in _claude_message(wrapped, number, names, full):
                    line.sub = True
                    yield line
            continue
        if kind not in ("user", "assistant") or not isinstance(entry.get("message"), dict):
            continue
        if entry.get("isMeta"):
            continue
        sub = bool(entry.get("isSidechain"))
        for line in _claude_message(entry, number, names, full):
            line.sub = line.sub or sub
            yield line


def _claude_message(
    entry: dict[str, Any], number: int, names: dict[str, str], full: bool
) -> Iterator[Line]:
    content = entry["message"].get("content")
    anchor = str(entry.get("uuid") or f"L{number}")
    if entry.get("type") == "user" and isinstance(content, str):
        yield Line(anchor, "PROMPT", content[:PROMPT_CHARS])
        return
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text" and block.get("text", "").strip():
            kind = "PROMPT" if entry.get("type") == "user" else "SAY"
            limit = PROMPT_CHARS if kind == "PROMPT" else 300
            yield Line(anchor, kind, str(block["text"])[:limit])
        elif btype == "tool_use":
            names[str(block.get("id"))] = str(block.get("name"))
            yield Line(
                str(block.get("id")), "CALL", f"{block.get('name')} {_one_line(block.get('input'))}"
            )
        elif btype == "tool_result":
            call = str(block.get("tool_use_id"))
            body = _text_of(block.get("content"))
            kind = "ERR" if block.get("is_error") else "OK"
            if names.get(call) == "AskUserQuestion":
                kind = "ASK"
            yield Line(call, kind, _excerpt(body, full or kind == "ASK"))


# Codex ---------------------------------------------------------------------------------


def codex(text: str, full: bool) -> Iterator[Line]:
    for number, entry in _json_lines(text):
        if not isinstance(entry, dict) or not isinstance(entry.get("payload"), dict):
            continue
        payload, kind = entry["payload"], entry.get("type")
        ptype = payload.get("type")
        if kind == "session_meta":
            git = payload.get("git") or {}
            yield Line(
                f"L{number}", "META", f"session cwd={payload.get('cwd')} git={_one_line(git)}"
            )
        elif kind == "event_msg" and ptype == "user_message":
            yield Line(f"L{number}", "PROMPT", str(payload.get("message") or "")[:PROMPT_CHARS])
        elif kind == "event_msg" and ptype == "agent_message":
            yield Line(f"L{number}", "SAY", str(payload.get("message") or "")[:300])
        elif kind == "compacted":
            yield Line(f"L{number}", "META", "compaction")
        elif kind == "response_item" and ptype in ("function_call", "custom_tool_call"):
            args = payload.get("arguments", payload.get("input"))
            yield Line(
                str(payload.get("call_id")), "CALL", f"{payload.get('name')} {_one_line(args)}"
            )
        elif kind == "response_item" and ptype in (
            "function_call_output",
            "custom_tool_call_output",
        ):
            output = payload.get("output")
            body = _text_of(output) if not isinstance(output, str) else output
            code = _exit_code(body)
            yield Line(
                str(payload.get("call_id")),
                "ERR" if code not in (None, 0) else "OK",
                _excerpt(body, full),
            )
        elif kind == "response_item" and ptype == "web_search_call":
            yield Line(f"L{number}", "CALL", f"web_search {_one_line(payload.get('action'))}")


def _exit_code(body: str) -> int | None:
    for marker in ("Process exited with code ", "Exit code: "):
        at = body.find(marker)
        if at >= 0:
            digits = body[at + len(marker) :].split()[0] if body[at + len(marker) :].split() else ""
            try:
                return int(digits)
            except ValueError:
                return None
    try:
        meta = json.loads(body).get("metadata") or {}
        code = meta.get("exit_code")
        return code if isinstance(code, int) else None
    except (ValueError, AttributeError):
        return None


# Copilot CLI ---------------------------------------------------------------------------


def copilot(text: str, full: bool) -> Iterator[Line]:
    for number, entry in _json_lines(text):
        if not isinstance(entry, dict) or not isinstance(entry.get("data"), dict):
            continue
        data, kind = entry["data"], entry.get("type")
        if kind == "session.start":
            yield Line(f"L{number}", "META", f"session {_one_line(data.get('context'))}")
        elif kind == "user.message":
            yield Line(
                str(entry.get("id")), "PROMPT", str(data.get("content") or "")[:PROMPT_CHARS]
            )
        elif kind == "assistant.message" and str(data.get("content") or "").strip():
            yield Line(str(entry.get("id")), "SAY", str(data["content"])[:300])
        elif kind == "tool.execution_start":
            yield Line(
                str(data.get("toolCallId")),
                "CALL",
                f"{data.get('toolName')} {_one_line(data.get('arguments'))}",
            )
        elif kind == "tool.execution_complete":
            result = data.get("result") or data.get("error") or {}
            body = _text_of(result.get("content") if isinstance(result, dict) else result)
            ok = data.get("success") is not False
            yield Line(str(data.get("toolCallId")), "OK" if ok else "ERR", _excerpt(body, full))


# Gemini CLI ----------------------------------------------------------------------------


def gemini(text: str, full: bool) -> Iterator[Line]:
    try:
        whole = json.loads(text)
        messages = whole.get("messages") if isinstance(whole, dict) else None
    except ValueError:
        messages = None
    if messages is None:  # JSON lines: a header, records that repeat as they change, $set
        by_id: dict[str, dict[str, Any]] = {}
        for _, entry in _json_lines(text):
            if not isinstance(entry, dict):
                continue
            records = entry.get("$set", {}).get("messages") if "$set" in entry else [entry]
            for record in records or []:
                if isinstance(record, dict) and record.get("id") and record.get("type"):
                    by_id[str(record["id"])] = record
        messages = list(by_id.values())
    for message in messages:
        if not isinstance(message, dict):
            continue
        anchor, kind = str(message.get("id")), message.get("type")
        if kind == "user":
            yield Line(anchor, "PROMPT", _text_of(message.get("content"))[:PROMPT_CHARS])
        elif kind == "gemini":
            said = _text_of(message.get("content"))
            if said.strip():
                yield Line(anchor, "SAY", said[:300])
            for call in message.get("toolCalls") or []:
                yield Line(
                    str(call.get("id")), "CALL", f"{call.get('name')} {_one_line(call.get('args'))}"
                )
                outputs = []
                for result in call.get("result") or []:
                    response = (result.get("functionResponse") or {}).get("response") or {}
                    outputs.append(str(response.get("output") or response.get("error") or ""))
                bad = call.get("status") != "success" or (
                    "Exit Code: 0" not in "".join(outputs) and "Exit Code:" in "".join(outputs)
                )
                yield Line(
                    str(call.get("id")), "ERR" if bad else "OK", _excerpt("\n".join(outputs), full)
                )


# OpenCode ------------------------------------------------------------------------------


def opencode(text: str, full: bool) -> Iterator[Line]:
    whole = json.loads(text)
    info = whole.get("info") or {}
    yield Line("L1", "META", f"session dir={info.get('directory')} parent={info.get('parentID')}")
    for message in whole.get("messages") or []:
        role = (message.get("info") or {}).get("role")
        for part in message.get("parts") or []:
            call = part.get("callID")  # some are "REDACTED": the part's own id then
            ptype = part.get("type")
            anchor = str(call if call and call != "REDACTED" else part.get("id"))
            if ptype == "text" and role == "user" and not part.get("synthetic"):
                yield Line(anchor, "PROMPT", str(part.get("text") or "")[:PROMPT_CHARS])
            elif ptype == "text" and role == "assistant" and str(part.get("text") or "").strip():
                yield Line(anchor, "SAY", str(part["text"])[:300])
            elif ptype == "tool":
                state = part.get("state") or {}
                yield Line(anchor, "CALL", f"{part.get('tool')} {_one_line(state.get('input'))}")
                body = str(state.get("output") or state.get("error") or "")
                meta = state.get("metadata") or {}
                bad = state.get("status") == "error" or meta.get("exit") not in (None, 0)
                yield Line(anchor, "ERR" if bad else "OK", _excerpt(body, full))


# Cursor --------------------------------------------------------------------------------


def cursor(text: str, full: bool) -> Iterator[Line]:
    for number, entry in _json_lines(text):
        if not isinstance(entry, dict):
            continue
        said = _text_of((entry.get("message") or {}).get("content"))
        kind = "PROMPT" if entry.get("role") == "user" else "SAY"
        yield Line(f"L{number}", kind, said[: PROMPT_CHARS if kind == "PROMPT" else 600])


def format_of(text: str) -> str:
    head = text.lstrip()[:4000]
    if (
        head.startswith("{")
        and '"info"' in head[:200]
        and '"messages"' in text[:50_000]
        and "\n" in head[:3]
    ):
        return "opencode"
    first = text.splitlines()[0] if text else ""
    if '"projectHash"' in first or (
        '"sessionId"' in head[:300] and '"messages"' in head and '"type": "user"' in head
    ):
        return "gemini"
    if '"session_meta"' in head or '"response_item"' in head:
        return "codex"
    if '"session.start"' in first:
        return "copilot"
    if first.startswith('{"role"'):
        return "cursor"
    if '"info"' in head[:300]:
        return "opencode"
    return "claude_code"


READERS = {
    "claude_code": claude_code,
    "codex": codex,
    "copilot": copilot,
    "gemini": gemini,
    "opencode": opencode,
    "cursor": cursor,
}


def lines_of(path: Path, full: bool = False) -> list[Line]:
    text = open_text(path)
    return list(READERS[format_of(text)](text, full))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--full", action="store_true", help="results whole")
    parser.add_argument("--from", dest="start", type=int, default=1)
    parser.add_argument("--to", dest="stop", type=int, default=10**9)
    parser.add_argument("--calls", action="store_true", help="the tool calls alone, a line each")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends it quietly
    text = open_text(args.file)
    print(f"# {args.file} ({format_of(text)})")
    for n, line in enumerate(READERS[format_of(text)](text, args.full), start=1):
        if not args.start <= n <= args.stop:
            continue
        where = "  [sub]" if line.sub else ""
        if args.calls:
            if line.kind == "CALL":
                print(f"#{n} {line.anchor}{where} {line.text[:200]}")
            continue
        body = line.text.replace("\n", "\n        ")
        print(f"#{n} {line.kind} {line.anchor}{where}\n        {body}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
