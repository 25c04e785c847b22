"""The console's one router, which app/main.py mounts: every page module's routes (a module
a page), each rendered through pages.py and signed in through auth.py. Every page goes
through the same services and tenant scope as the API, so a key sees its own tenant only
and its role decides what it may press."""

from __future__ import annotations

from fastapi import APIRouter

from app.console import (
    audit,
    browse,
    drafts,
    keys,
    memory,
    oauth,
    oidc,
    review,
    search,
    sessions,
    sign_in,
    stats,
    strategies,
    tidy,
)
from app.console.pages import console_router

PAGES = (
    sign_in, search, browse, memory, sessions, strategies, review, drafts, tidy, stats,
    audit, keys, oauth, oidc,
)  # fmt: skip


def _assembled() -> APIRouter:
    assembled = console_router()
    for module in PAGES:
        assembled.include_router(module.router)
    return assembled


router = _assembled()
