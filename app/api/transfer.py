"""/memories/export and /memories/import: a tenant's memories as JSON lines (NDJSON).

The export streams from one transaction (a consistent copy) as the client reads it; the
import reads its body as a stream, line by line, each line bounded, into one transaction."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from typing import TypeVar

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ValidationError

from app.api.deps import PrincipalDep, RuntimeDep, ServicesDep
from app.api.examples import Since, SourceRepo, Until
from app.api.responses import ImportOut, render_import
from app.domain.errors import InvalidInputError, PayloadTooLargeError, UnsupportedMediaTypeError
from app.domain.filters import FilterRequest
from app.domain.transfer import (
    ExportHeader,
    ExportHeaderLine,
    ExportRequest,
    ImportRequest,
    MemoryRecord,
    SessionLine,
    SessionRecord,
)
from app.services.scope import services_for

router = APIRouter(prefix="/memories", tags=["export and import"])

NDJSON = "application/x-ndjson"
IMPORT_MEDIA_TYPES = frozenset({NDJSON, "application/jsonl", "application/json"})

_EXPORT_EXAMPLE = (
    '{"format":"agent-memory/export","version":1,"tenant_id":"default","source_repo":null,'
    '"count":1,"embedding_model":null,"dimensions":null,"exported_at":"2026-11-23T16:00:00Z"}\n'
    '{"id":"0193c0de-0000-7000-8000-000000000001","content":"Use uv for installs",'
    '"memory_type":"decision","tags":["tooling"],"trust_level":"agent","pinned":false,'
    '"created_at":"2026-11-20T09:00:00Z","superseded_by":null}\n'
)


@router.get(
    "/export",
    summary="Export memories as JSON lines",
    description="A header line, then one line per memory (archived and superseded too), "
    "oldest first, then one per session. `embeddings=true` adds each vector and the model that "
    "made it; `since` and `until` keep the memories stored in that window.",
    response_class=StreamingResponse,
    responses={200: {"content": {NDJSON: {"example": _EXPORT_EXAMPLE}}}},
)
async def export_memories(
    runtime: RuntimeDep,
    principal: PrincipalDep,
    source_repo: SourceRepo = None,
    embeddings: bool = False,
    since: Since = None,
    until: Until = None,
) -> StreamingResponse:
    # The transaction outlives this function: the body streams from it after the return.
    scope = AsyncExitStack()
    services = await scope.enter_async_context(services_for(runtime, principal))
    try:
        kept = FilterRequest(source_repo=source_repo, since=since, until=until)
        export = await services.transfer.export(ExportRequest(kept, embeddings))
    except BaseException as exc:
        await scope.__aexit__(type(exc), exc, exc.__traceback__)  # rolls back; never swallows
        raise

    async def lines() -> AsyncIterator[str]:
        async with scope:
            yield ExportHeaderLine.of(export.header).model_dump_json() + "\n"
            async for memory, vector in export.memories:
                yield MemoryRecord.of(memory, vector).line()
            async for session in export.sessions:
                yield SessionRecord.of(session).line()

    return StreamingResponse(lines(), media_type=NDJSON)


class NdjsonImport:
    """The request body as an import: its header line, then its memories, each line parsed
    when the service asks for it. Refusals name the line."""

    def __init__(self, request: Request, max_bytes: int, max_line_bytes: int) -> None:
        self._lines = _numbered_lines(request, max_bytes, max_line_bytes)

    async def header(self) -> ExportHeader:
        async for number, text in self._lines:
            return _parse(ExportHeaderLine, number, text).header()
        raise InvalidInputError("the body is empty: expected an export's header line", field="body")

    async def memories(self) -> AsyncIterator[tuple[int, ImportRequest | SessionLine]]:
        async for number, text in self._lines:
            if text.lstrip().startswith(b'{"session"'):
                yield number, _parse(SessionRecord, number, text).session
            else:
                yield number, _parse(MemoryRecord, number, text).request()


M = TypeVar("M", bound=BaseModel)


def _parse(model: type[M], number: int, text: bytes) -> M:
    try:
        return model.model_validate_json(text)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        field = f"lines.{number}.{where}" if where else f"lines.{number}"
        raise InvalidInputError(f"line {number}: {error['msg']}", field=field) from None


async def _numbered_lines(
    request: Request, max_bytes: int, max_line_bytes: int
) -> AsyncIterator[tuple[int, bytes]]:
    """Non-blank lines with their numbers; never more than one line's bytes held."""
    line = bytearray()
    number = 0
    total = 0
    async for part in request.stream():
        total += len(part)
        if total > max_bytes:
            raise PayloadTooLargeError(f"an import is at most {max_bytes} bytes", field="body")
        start = 0
        while start < len(part):
            end = part.find(b"\n", start)
            line += part[start : len(part) if end == -1 else end]
            if len(line) > max_line_bytes:
                raise PayloadTooLargeError(
                    f"line {number + 1} is longer than {max_line_bytes} bytes",
                    field=f"lines.{number + 1}",
                )
            if end == -1:
                break
            start = end + 1
            number += 1
            if line.strip():
                yield number, bytes(line)
            line.clear()
    if line.strip():
        yield number + 1, bytes(line)


@router.post(
    "/import",
    summary="Import memories from JSON lines",
    description="An export's lines as the body (`Content-Type: application/x-ndjson`). "
    "Admin only. All or nothing: a bad line is named and nothing is written. Known content "
    "is reinforced, not duplicated; the same memory (its id and content) already here "
    "changes nothing; vectors from another model, or none, are made again; supersede links "
    "are restored.",
    response_model=ImportOut,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {NDJSON: {"schema": {"type": "string"}, "example": _EXPORT_EXAMPLE}},
        }
    },
)
async def import_memories(request: Request, services: ServicesDep) -> ImportOut:
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type not in IMPORT_MEDIA_TYPES:
        # A browser's form or `text/plain` fetch is sent cross-site without asking first;
        # only the declared types are an import.
        raise UnsupportedMediaTypeError(
            f"an import is sent as {NDJSON} (the body was {media_type or 'untyped'})",
            field="Content-Type",
        )
    settings = services.runtime.settings
    body = NdjsonImport(request, settings.max_import_bytes, settings.max_body_bytes)
    report = await services.transfer.import_memories(body)
    return render_import(report)
