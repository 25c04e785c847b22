"""Stand-ins for the models' APIs that the real agent CLIs call, each keeping every request:
Anthropic's Messages API (Claude Code) as `StubModel`; OpenAI's Responses API (Codex), the
Gemini API (Gemini CLI) and OpenAI's Chat Completions API (Copilot CLI) driven by a
`Script`."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route


class StubModel:
    """A stand-in for the model's API: every request is kept; each answer streams `text`,
    or, while `tool_calls` holds one whose tool the request offers, that tool call (after
    running `before_tool`, what the agent did first); a tool the request names but defers
    is first loaded with Claude Code's ToolSearch."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.text = "Done: I looked at the repository."
        self.tool_calls: list[tuple[str, dict[str, Any]]] = []
        self.tools_loaded: list[str] = []  # through Claude Code's ToolSearch
        self.before_tool: Callable[[], None] | None = None

    def app(self) -> Starlette:
        async def messages(request: Request) -> Response:
            body = await request.json()
            self.requests.append(body)
            if not body.get("stream"):
                return JSONResponse(self._message([{"type": "text", "text": self.text}]))
            offered = {tool["name"] for tool in body.get("tools") or []}
            wanted = self.tool_calls[0][0] if self.tool_calls else None
            if wanted in offered:
                name, arguments = self.tool_calls.pop(0)
                if self.before_tool is not None:
                    self.before_tool()
                return StreamingResponse(
                    self._tool_events(name, arguments), media_type="text/event-stream"
                )
            if wanted and "ToolSearch" in offered and wanted in json.dumps(body):
                # Listed by name only (deferred): load it first, as the model does.
                self.tools_loaded.append(wanted)
                load = {"query": f"select:{wanted}"}
                return StreamingResponse(
                    self._tool_events("ToolSearch", load), media_type="text/event-stream"
                )
            return StreamingResponse(self._events(), media_type="text/event-stream")

        async def anything(request: Request) -> Response:
            return JSONResponse({})

        return Starlette(
            routes=[
                Route("/v1/messages", messages, methods=["POST"]),
                Route("/{path:path}", anything, methods=["GET", "POST", "HEAD"]),
            ]
        )

    def _message(self, content: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "id": "msg_stub", "type": "message", "role": "assistant", "model": "stub",
            "content": content, "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }  # fmt: skip

    async def _events(self) -> AsyncIterator[str]:
        start = {**self._message([]), "stop_reason": None}
        for name, data in (
            ("message_start", {"type": "message_start", "message": start}),
            ("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": {"type": "text", "text": ""}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                     "delta": {"type": "text_delta", "text": self.text}}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "usage": {"output_tokens": 5},
                               "delta": {"stop_reason": "end_turn", "stop_sequence": None}}),
            ("message_stop", {"type": "message_stop"}),
        ):  # fmt: skip
            yield f"event: {name}\ndata: {json.dumps(data)}\n\n"

    async def _tool_events(self, name: str, arguments: dict[str, Any]) -> AsyncIterator[str]:
        start = {**self._message([]), "stop_reason": None}
        block = {"type": "tool_use", "id": f"toolu_{len(self.requests)}", "name": name,
                 "input": {}}  # fmt: skip
        delta = {"type": "input_json_delta", "partial_json": json.dumps(arguments)}
        for event, data in (
            ("message_start", {"type": "message_start", "message": start}),
            ("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "usage": {"output_tokens": 5},
                               "delta": {"stop_reason": "tool_use", "stop_sequence": None}}),
            ("message_stop", {"type": "message_stop"}),
        ):  # fmt: skip
            yield f"event: {event}\ndata: {json.dumps(data)}\n\n"

    def seen(self, since: int = 0, until: int | None = None) -> str:
        return "\n".join(json.dumps(r) for r in self.requests[since:until])


def failing_then_fixed(repo: Path) -> list[tuple[str, dict[str, Any]]]:
    """The stub model's calls for a session that fails a command, writes the missing file,
    and runs the command again (check.py, written here, imports the missing helper)."""
    (repo / "check.py").write_text("import helper\nprint(helper.OK)\n")
    return [
        ("Bash", {"command": "python3 check.py"}),
        ("Write", {"file_path": str(repo / "helper.py"), "content": "OK = 'ok'\n"}),
        ("Bash", {"command": "python3 check.py"}),
    ]


@dataclass
class Script:
    """What the stub model does: each step a tool call (a shell command, or one of our MCP
    tools by the end of its name), made once the request offers that tool; then text."""

    steps: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    text: str = "Done: I looked at the repository."

    def next_call(self, offered: list[str]) -> tuple[str, dict[str, Any]] | None:
        if not self.steps:
            return None
        wanted, arguments = self.steps[0]
        for name in offered:
            if name == wanted or name.endswith((f"_{wanted}", f"__{wanted}", f"-{wanted}")):
                self.steps.pop(0)
                return name, arguments
        return None

    def seen(self, since: int = 0, until: int | None = None) -> str:
        return "\n".join(json.dumps(r) for r in self.requests[since:until])


def responses_api(script: Script) -> Starlette:
    """OpenAI's Responses API as Codex streams it."""

    async def responses(request: Request) -> Response:
        body = await request.json()
        script.requests.append(body)
        offered: list[str] = []  # an MCP server's tools come in a namespace: NAMESPACE__tool
        for tool in body.get("tools") or []:
            inner = tool.get("tools") if tool.get("type") == "namespace" else None
            offered += [f"{tool['name']}__{t['name']}" for t in inner or []] or [tool.get("name")]
        call = script.next_call([str(name) for name in offered])
        n = len(script.requests)
        if call is not None:
            name, arguments = call
            namespace, _, inner_name = name.rpartition("__")
            item: dict[str, Any] = {"type": "function_call", "name": inner_name or name,
                    "arguments": json.dumps(arguments), "call_id": f"call_{n}", "id": f"fc_{n}",
                    **({"namespace": namespace} if namespace else {})}  # fmt: skip
        else:
            item = {"type": "message", "role": "assistant", "id": f"msg_{n}",
                    "content": [{"type": "output_text", "text": script.text}]}  # fmt: skip
        usage = {"input_tokens": 1, "input_tokens_details": None, "output_tokens": 1,
                 "output_tokens_details": None, "total_tokens": 2}  # fmt: skip

        async def events() -> AsyncIterator[str]:
            for event in (
                {"type": "response.created", "response": {"id": f"resp_{n}"}},
                {"type": "response.output_item.done", "item": item},
                {"type": "response.completed", "response": {"id": f"resp_{n}", "usage": usage}},
            ):
                yield f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    async def anything(request: Request) -> Response:
        return JSONResponse({"data": [], "models": []})

    return Starlette(
        routes=[
            Route("/v1/responses", responses, methods=["POST"]),
            Route("/{path:path}", anything, methods=["GET", "POST"]),
        ]
    )


def gemini_api(script: Script) -> Starlette:
    """The Gemini API as Gemini CLI streams it (streamGenerateContent, server-sent events)."""

    async def generate(request: Request) -> Response:
        body = await request.json()
        script.requests.append(body)
        offered = [
            str(d.get("name"))
            for tool in body.get("tools") or []
            for d in tool.get("functionDeclarations") or []
        ]
        call = script.next_call(offered)
        part = (
            {"functionCall": {"name": call[0], "args": call[1]}}
            if call is not None
            else {"text": script.text}
        )
        chunk = {
            "candidates": [{"content": {"role": "model", "parts": [part]},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1,
                              "totalTokenCount": 2},
        }  # fmt: skip
        if "stream" not in request.url.path.lower():
            return JSONResponse(chunk)

        async def events() -> AsyncIterator[str]:
            yield f"data: {json.dumps(chunk)}\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    return Starlette(routes=[Route("/{path:path}", generate, methods=["POST"])])


def chat_completions_api(script: Script) -> Starlette:
    """OpenAI's Chat Completions API as Copilot CLI streams it (its BYOK provider's default
    wire API)."""

    async def completions(request: Request) -> Response:
        body = await request.json()
        script.requests.append(body)
        offered = [str((t.get("function") or {}).get("name")) for t in body.get("tools") or []]
        call = script.next_call(offered)
        n = len(script.requests)
        delta: dict[str, Any] = {"role": "assistant", "content": script.text}
        if call is not None:
            function = {"name": call[0], "arguments": json.dumps(call[1])}
            called = {"index": 0, "id": f"call_{n}", "type": "function", "function": function}
            delta = {"role": "assistant", "tool_calls": [called]}
        finish = "tool_calls" if call is not None else "stop"
        usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}

        async def events() -> AsyncIterator[str]:
            for choice, more in (({"index": 0, "delta": delta, "finish_reason": None}, {}),
                                 ({"index": 0, "delta": {}, "finish_reason": finish},
                                  {"usage": usage})):  # fmt: skip
                chunk = {"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "created": 0,
                         "model": body.get("model"), "choices": [choice], **more}  # fmt: skip
                yield f"data: {json.dumps(chunk)}\n\n"
            yield "data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    async def anything(request: Request) -> Response:
        return JSONResponse({"object": "list", "data": []})

    return Starlette(
        routes=[
            Route("/v1/chat/completions", completions, methods=["POST"]),
            Route("/{path:path}", anything, methods=["GET", "POST"]),
        ]
    )


def strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []
