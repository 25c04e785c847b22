"""Grants and their tokens in PostgreSQL (app/repository/oauth.py): removing a person
revokes their grants, and nothing else; a grant of a person removed, or of a revoked key of
no one, lets no token in; the schedule forgets what no one can use, and keeps the grants."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest

from app.domain.oauth import AuthorizationRequest, Grant, hash_secret, new_secret
from app.repository.oauth import OAuthRepository
from app.services.keys import KeyService
from tests.conftest import EMPTY_TABLES

pytestmark = pytest.mark.citus

SOON = timedelta(hours=1)


@pytest.fixture
async def repo(db: asyncpg.Connection) -> AsyncIterator[OAuthRepository]:
    yield OAuthRepository(db)
    await db.execute(EMPTY_TABLES)


def asked(
    client_id: str = "https://c.example/doc", expires_in: timedelta = SOON
) -> AuthorizationRequest:
    return AuthorizationRequest(
        client_id=client_id, client_name="C", redirect_uri="http://localhost/cb",
        redirect_uri_explicit=True, code_challenge="x" * 43, state="s", scopes=[],
        resource="https://mem.example/mcp", expires_at=datetime.now(UTC) + expires_in,
    )  # fmt: skip


async def connect(
    repo: OAuthRepository, key: Any, tokens_expire_in: timedelta = SOON
) -> tuple[Grant, str]:
    """A grant made with this key (for its person), and its access token."""
    grant = await repo.add_grant(key.tenant_id, key.person_id, key.id, asked(), "agent")
    access, refresh = new_secret("amat_"), new_secret("amrt_")
    later = datetime.now(UTC) + tokens_expire_in
    await repo.add_tokens(grant.id, hash_secret(access), later, hash_secret(refresh), later)
    return grant, access


async def live(repo: OAuthRepository, access: str) -> bool:
    token = await repo.token(hash_secret(access), "access")
    return token is not None and token.live


async def test_removing_a_person_revokes_their_grants_only(
    repo: OAuthRepository, db: asyncpg.Connection
) -> None:
    keys = KeyService.on_connection(db)
    ada = (await keys.create("team", "ada laptop", "agent", person="Ada")).record
    ada2 = (await keys.create("team", "ada desktop", "agent", person="Ada")).record
    bob = (await keys.create("team", "bob laptop", "agent", person="Bob")).record
    ada_other = (await keys.create("other", "ada there", "agent", person="Ada")).record
    mine = [await connect(repo, ada), await connect(repo, ada2)]
    bobs, elsewhere = await connect(repo, bob), await connect(repo, ada_other)

    assert ada.person_id is not None
    async with db.transaction():
        revoked = await repo.revoke_person("team", ada.person_id)
    assert {g.id for g in revoked} == {g.id for g, _ in mine}
    assert [await live(repo, access) for _, access in mine] == [False, False]
    assert await live(repo, bobs[1]) and await live(repo, elsewhere[1])
    assert await repo.revoke_person("team", ada.person_id) == []  # nothing twice


async def test_a_grant_stands_while_someone_stands_behind_it(
    repo: OAuthRepository, db: asyncpg.Connection
) -> None:
    keys = KeyService.on_connection(db)
    ada = (await keys.create("team", "ada laptop", "agent", person="Ada")).record
    nobody = (await keys.create("team", "ci", "agent")).record
    _, adas = await connect(repo, ada)
    _, ci = await connect(repo, nobody)
    # A person's grant outlives the key they approved with (they rotate keys)...
    await keys.revoke("team", ada.id)
    assert await live(repo, adas)
    # ...not the person: removed, their clients stop at once (whatever else the removal does).
    await db.execute("UPDATE people SET removed_at = now() WHERE id = $1", ada.person_id)
    assert not await live(repo, adas)
    # A grant of no one lives as long as its key.
    assert await live(repo, ci)
    await keys.revoke("team", nobody.id)
    assert not await live(repo, ci)


async def test_the_schedule_forgets_what_no_one_can_use_and_keeps_grants(
    repo: OAuthRepository, db: asyncpg.Connection
) -> None:
    key = (
        await KeyService.on_connection(db).create("team", "ada laptop", "agent", person="Ada")
    ).record
    kept, kept_access = await connect(repo, key)
    _, _ = await connect(repo, key, tokens_expire_in=-SOON)  # both tokens expired
    revoked, _ = await connect(repo, key)
    await repo.revoke("team", revoked.id)
    await repo.open_request(hash_secret("old"), asked(expires_in=-SOON))
    await repo.open_request(hash_secret("new"), asked())
    # (This connection has no jsonb codec: the metadata as text.)
    await db.execute(
        "INSERT INTO oauth_clients (id, metadata, created_at) VALUES"
        " ('unused', '{}', now() - interval '31 days'), ('fresh', '{}', now())"
    )

    # 2 + 2 tokens (expired, revoked), a request, a client.
    assert await repo.forget_expired(unused_client_days=30) == 6
    assert await live(repo, kept_access)
    assert await repo.request(hash_secret("new")) is not None
    assert {r["id"] for r in await db.fetch("SELECT id FROM oauth_clients")} == {"fresh"}
    assert await db.fetchval("SELECT count(*) FROM oauth_grants") == 3
    assert kept.id in {g.id for g in await repo.grants("team")}
