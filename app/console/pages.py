"""What every console page shares: the templates and their filters, the security headers,
the route class that renders a refusal as a page, the signed-in caller's services for one
page, a filter box's and a tick box's query types, and the redirect after a form. One module
a page holds its routes (search.py, browse.py, memory.py, ...), each on a router of this
route class, and router.py assembles them; who is signed in and the forms' CSRF token are
auth.py's."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Self

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.responses import RedirectResponse
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from app.console.auth import CSRF_FIELD, csrf_token, set_cookies, signed_in
from app.domain.compact import age
from app.domain.errors import AppError, UnauthorizedError
from app.domain.filters import FilterRequest
from app.domain.principal import Principal
from app.domain.problems import problem_of
from app.http_headers import page_headers
from app.runtime import Runtime
from app.services.scope import Services, services_for

HERE = Path(__file__).parent
STATIC_URL = "/console/static"
# A page's own styles only: no script at all, nothing from another origin.
SECURITY_HEADERS = page_headers(
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'"
)
PAGE_SIZE = 25


async def runtime_of(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


RuntimeDep = Annotated[Runtime, Depends(runtime_of)]

# A filter's box as a page's query takes it (blank_to_none: an empty box filters nothing).
Text = Annotated[str | None, Query(max_length=1000)]
# A tick box as a page's query takes it.
Flag = Annotated[bool, Query()]
# Where a page of a list starts (the page before's `next_cursor`).
Cursor = Annotated[str | None, Query(max_length=200)]


def blank_to_none(value: str | None) -> str | None:
    return value.strip() or None if value is not None else None


@dataclass(frozen=True, slots=True)
class FilterBoxes:
    """The filter boxes of a page of memories (search, browse): the repository, the type and
    who wrote it, a blank box filtering nothing."""

    source_repo: str | None
    memory_type: str | None
    person_id: str | None

    @classmethod
    def of(cls, source_repo: Text = None, memory_type: Text = None, person_id: Text = None) -> Self:
        """The boxes as a page's query string sends them (a FastAPI dependency: `Boxes`)."""
        return cls(blank_to_none(source_repo), blank_to_none(memory_type), blank_to_none(person_id))

    def filter(self, *, archived: bool, quarantined: bool = False) -> FilterRequest:
        kind = self.memory_type
        return FilterRequest(
            source_repo=self.source_repo,
            memory_type=[kind] if kind else None,
            include_archived=archived,
            include_quarantined=quarantined,
            person_id=self.person_id,
        )

    def form(self) -> dict[str, Any]:
        """The boxes as the page shows them again."""
        repo, kind = self.source_repo or "", self.memory_type or ""
        return {"source_repo": repo, "memory_type": kind, "person_id": self.person_id}


# A page's filter boxes, read from its query string once for every page that has them.
Boxes = Annotated[FilterBoxes, Depends(FilterBoxes.of)]

templates = Jinja2Templates(directory=HERE / "templates")
templates.env.filters["age"] = lambda when: age(when, datetime.now(UTC)) if when else "never"


def shown_value(value: Any) -> Any:
    """A value as a person reads it in the audit trail: a stored real (a float4's
    1.100000023841858) rounded to what it holds."""
    return float(f"{value:.6g}") if isinstance(value, float) else value


templates.env.filters["shown"] = shown_value


def static_files() -> StaticFiles:
    return StaticFiles(directory=HERE / "static")


def secured(response: Response) -> Response:
    response.headers.update(SECURITY_HEADERS)
    return response


class ConsoleRoute(APIRoute):
    """A refusal on a console page is a page (with the same status), not problem JSON."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def render_errors(request: Request) -> Response:
            try:
                return await handler(request)
            except UnauthorizedError:
                return secured(RedirectResponse("/console/sign-in", status_code=303))
            except AppError as exc:
                return page(request, "error.html", {"problem": problem_of(exc)}, exc.status)

        return render_errors


def page(
    request: Request,
    template: str,
    context: dict[str, Any],
    status: int = 200,
    principal: Principal | None = None,
) -> Response:
    principal = principal or getattr(request.state, "principal", None)
    shown = {
        "principal": principal,
        # Buttons are shown by the same capability table the services enforce.
        "is_admin": principal is not None and principal.can("admin"),
        "can_write": principal is not None and principal.can("write"),
        "open_mode": principal is not None and principal.key_id is None,
        "csrf_field": CSRF_FIELD,
        "csrf": csrf_token(request),
        "static": STATIC_URL,
        **context,
    }
    response = templates.TemplateResponse(request, template, shown, status_code=status)
    set_cookies(request, response)
    return secured(response)


async def caller(request: Request, runtime: Runtime) -> Principal:
    principal = await signed_in(request, runtime)
    if principal is None:
        raise UnauthorizedError("sign in")
    request.state.principal = principal
    return principal


def back_to(path: str) -> Response:
    """After a form: the page again (POST, redirect, GET), so a reload repeats nothing."""
    return secured(RedirectResponse(path, status_code=303))


@asynccontextmanager
async def services_of(request: Request, runtime: Runtime) -> AsyncIterator[Services]:
    """The signed-in caller's services for one page, in one transaction."""
    principal = await caller(request, runtime)
    async with services_for(runtime, principal) as services:
        yield services


def console_router() -> APIRouter:
    """A router for a module of pages: refusals rendered as pages, no OpenAPI entry."""
    return APIRouter(route_class=ConsoleRoute, include_in_schema=False)
