"""What every console page shares: the templates and their filters, the security headers,
the route class that renders a refusal as a page, the signed-in caller's services for one
page, and the redirect after a form. One module a page (or a family of pages) holds its
routes (routes.py, drafts.py), each on a router of this route class."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.responses import RedirectResponse
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from app.console.signin import CSRF_FIELD, csrf_token, set_cookies, signed_in
from app.domain.compact import age
from app.domain.errors import AppError, UnauthorizedError
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


def blank_to_none(value: str | None) -> str | None:
    return value.strip() or None if value is not None else None


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
