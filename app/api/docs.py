"""/docs (Swagger UI) and /redoc from assets shipped in a package: no CDN, so the
interactive docs work on a machine with no network."""

from __future__ import annotations

from pathlib import Path

import fastapi_offline
from fastapi import APIRouter
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from app.http_headers import page_headers, script_hashes

ASSETS = Path(fastapi_offline.__file__).parent / "static"
ASSETS_URL = "/docs-assets"

router = APIRouter(include_in_schema=False)


def assets() -> StaticFiles:
    return StaticFiles(directory=ASSETS)


def _with_headers(page: HTMLResponse) -> HTMLResponse:
    """The console's security headers; the scripts are the packaged files and the page's
    own inline start-up script (by hash). Swagger UI and ReDoc set styles from script, and
    ReDoc runs a worker from a blob."""
    inline = script_hashes(bytes(page.body).decode())
    scripts = f"'self' {inline}" if inline else "'self'"
    csp = (
        f"default-src 'none'; script-src {scripts}; style-src 'self' 'unsafe-inline';"
        " img-src 'self' data:; font-src 'self' data:; connect-src 'self';"
        " worker-src blob:; form-action 'none'"
    )
    page.headers.update(page_headers(csp))
    return page


@router.get("/docs")
async def swagger_ui() -> HTMLResponse:
    return _with_headers(
        get_swagger_ui_html(
            openapi_url="/openapi.json",
            title="agent-memory API",
            swagger_js_url=f"{ASSETS_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS_URL}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS_URL}/favicon.png",
        )
    )


@router.get("/redoc")
async def redoc() -> HTMLResponse:
    return _with_headers(
        get_redoc_html(
            openapi_url="/openapi.json",
            title="agent-memory API",
            redoc_js_url=f"{ASSETS_URL}/redoc.standalone.js",
            redoc_favicon_url=f"{ASSETS_URL}/favicon.png",
            with_google_fonts=False,
        )
    )
