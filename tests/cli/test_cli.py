"""The `agent-memory` command as a person runs it: a subprocess against a real server."""

from __future__ import annotations

import asyncio
import io
import json
import os
import sys
from pathlib import Path
from typing import Any
from uuid import UUID

import asyncpg
import httpx
import pytest

from app import __version__
from app.cli.memories import AGENT_SHELL_MARKERS, as_person
from app.client import ClientError
from app.db.embedded import EmbeddedPostgres
from app.domain.principal import Principal
from app.progress import Progress
from app.repository.audit import record_operator_entry
from app.services.keys import KeyService
from tests.helpers.cli import run, runs_in_psql
from tests.server import launch


async def test_version_and_help_show_defaults() -> None:
    """Each option's default is printed once, and only when it is a value; the key in the
    environment is never printed."""
    code, out, _ = await run("--version")
    assert (code, out.strip()) == (0, f"agent-memory {__version__}")
    code, out, _ = await run("search", "--help", AGENT_MEMORY_API_KEY="am_secret_in_the_env")
    assert code == 0
    assert "(default: 10)" in out and "AGENT_MEMORY_API_KEY" in out
    assert "am_secret" not in out and "default: None" not in out and "default: False" not in out
    options = " ".join(out.split()).split(" --")
    assert [o for o in options if o.count("default") > 1] == []


async def test_search_list_and_show_against_a_server_with_keys(
    served: str, db: asyncpg.Connection
) -> None:
    key = (await KeyService.on_connection(db).create("default", "cli", "agent")).key
    async with httpx.AsyncClient(base_url=served) as http:
        stored = await http.post(
            "/memories",
            json={
                "content": "Pin the Postgres major version in CI images",
                "memory_type": "decision",
                "source_repo": None,
            },
            headers={"Authorization": f"Bearer {key}"},
        )
    memory_id = stored.json()["memory"]["id"]
    env = {"AGENT_MEMORY_URL": served, "AGENT_MEMORY_API_KEY": key}

    code, out, err = await run("search", "postgres version in CI", "--type", "decision", **env)
    assert code == 0, err
    assert memory_id in out and "Pin the Postgres major version" in out
    code, out, _ = await run("list", "--json", **env)
    assert [m["id"] for m in json.loads(out)["memories"]] == [memory_id]
    code, out, _ = await run("show", memory_id, **env)
    assert out.startswith("Pin the Postgres major version in CI images")
    # Every field with a value, labelled: what it is, then its history.
    shown = dict(line.strip().split(": ", 1) for line in out.splitlines()[2:])
    assert shown["memory_type"] == "decision" and shown["observation_count"] == "1"
    assert shown["id"] == memory_id and "superseded_by" not in shown

    # No key: one line that says why, no traceback, a non-zero exit.
    code, out, err = await run("list", "--url", served, AGENT_MEMORY_API_KEY="")
    assert code == 1
    [line] = err.strip().splitlines()
    assert line.startswith("agent-memory list: an API key is required")
    assert "AGENT_MEMORY_API_KEY" in line and "--api-key" in line  # where the CLI reads one


async def test_an_unreachable_server_is_one_line() -> None:
    code, _, err = await run("search", "anything", "--url", "http://127.0.0.1:9")
    assert code == 2
    assert err.strip().splitlines() == [
        "agent-memory search: agent-memory is not reachable at http://127.0.0.1:9 (ConnectError)"
    ]


async def test_keys_on_a_data_directory_never_migrated(tmp_path: Path) -> None:
    code, _, err = await run("keys", "list", "--data-dir", str(tmp_path))
    assert code == 0, err
    assert "Traceback" not in err
    # The embedded database was brought to the schema and stopped again.
    server = EmbeddedPostgres(tmp_path)
    url = await asyncio.to_thread(server.start)
    try:
        conn = await asyncpg.connect(url)
        assert await conn.fetchval("SELECT count(*) FROM api_keys") == 0
        await conn.close()
    finally:
        await asyncio.to_thread(server.stop)


async def test_keys_create_addresses_the_running_servers_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database_url: str
) -> None:
    """A server started on a data directory of its own: `keys create` naming none makes
    the key in that server's database (not in a second one in the default directory), and
    says which. The tenant's first key is admin when no --role is given, and says so."""
    for name in ("AGENT_MEMORY_DATA_DIR", "DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    places = {"XDG_STATE_HOME": str(tmp_path / "state"), "XDG_DATA_HOME": str(tmp_path / "data")}
    served = tmp_path / "srv"
    served.mkdir()
    process, base = await launch(served, **places)
    server = f"pid {process.pid}, `agent-memory serve`"
    database = f"the embedded database in {served.resolve()}"
    try:
        code, out, err = await run("keys", "create", "--name", "me", **places)
        assert code == 0, err
        assert f"agent-memory keys: {database}, which the running server uses ({server})" in err
        assert "(admin: the tenant had no active key, and no --role was given)" in err
        async with httpx.AsyncClient(base_url=base) as http:
            listed = await http.get(
                "/admin/keys", headers={"Authorization": f"Bearer {out.strip()}"}
            )
        assert listed.status_code == 200, listed.text  # the server knows it: its admin
        assert [(k["name"], k["role"]) for k in listed.json()] == [("me", "admin")]
        assert not (tmp_path / "data" / "agent-memory").exists()  # no second database

        code, _, err = await run("keys", "create", "--name", "ci", **places)
        assert code == 0, err
        assert "created agent key " in err and "no active key" not in err

        # Another database named: that one, and a warning naming the server's.
        code, _, err = await run("keys", "list", DATABASE_URL=database_url, **places)
        assert code == 0, err
        assert (
            f"warning: no running server uses it, the one running ({server}) uses {database}"
            f" (--data-dir {served.resolve()})"
        ) in err
    finally:
        process.terminate()
        await process.wait()
    assert list((tmp_path / "state" / "agent-memory" / "serving").iterdir()) == []


async def test_keys_against_an_unmigrated_external_database_says_what_to_run(
    scratch_database: Any,
) -> None:
    url = await scratch_database("agent_memory_unmigrated")
    code, _, err = await run("keys", "list", DATABASE_URL=url)
    assert code == 2
    assert err.strip().splitlines()[-1] == (
        "agent-memory keys: the database is not migrated; run `agent-memory migrate`"
    )


def test_progress_is_drawn_on_a_terminal_only() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    piped, terminal = io.StringIO(), Terminal()
    for stream in (piped, terminal):
        meter = Progress("export", 4, "memories", stream)
        for _ in range(4):
            meter.advance()
        meter.close()
    assert piped.getvalue() == ""  # a pipe or a log gets the summary line, not the meter
    assert terminal.getvalue().endswith("\rexport [" + "#" * 30 + "] 100%  4/4 memories\n")


async def test_a_failed_export_never_touches_the_last_backup(tmp_path: Path) -> None:
    backup = tmp_path / "backup.jsonl"
    backup.write_text('{"the": "last good backup"}\n')
    code, _, err = await run("export", "-o", str(backup), "--url", "http://127.0.0.1:9")
    assert code == 2 and "not reachable" in err and "Traceback" not in err
    assert backup.read_text() == '{"the": "last good backup"}\n'
    assert os.listdir(tmp_path) == ["backup.jsonl"]  # no temporary left


async def test_export_replaces_the_file_only_when_complete(
    served: str, tmp_path: Path, db: asyncpg.Connection
) -> None:
    async with httpx.AsyncClient(base_url=served) as http:
        await http.post(
            "/memories", json={"content": "Keep one migration per concern", "source_repo": None}
        )
    backup = tmp_path / "backup.jsonl"
    backup.write_text("old\n")
    async with httpx.AsyncClient(base_url=served) as http:
        await http.post("/sessions", json={"source_repo": "acme/api"})
    code, _, err = await run("export", "--any-repo", "-o", str(backup), "--url", served)
    assert code == 0, err
    lines = backup.read_text().splitlines()
    assert json.loads(lines[0])["count"] == 1 and len(lines) == 3
    assert f"exported 1 memory and 1 session of every repository to {backup}" in err


async def test_search_list_and_export_take_a_time_window(
    served: str, tmp_path: Path, db: asyncpg.Connection
) -> None:
    async with httpx.AsyncClient(base_url=served) as http:
        for content in ("Vendor the wheel cache in CI", "Vendor the npm cache in CI"):
            stored = await http.post("/memories", json={"content": content, "source_repo": None})
            if "wheel" in content:  # written a month ago
                await db.execute(
                    "UPDATE memories SET created_at = now() - interval '30 days' WHERE id = $1",
                    UUID(stored.json()["memory"]["id"]),
                )
    window = ("--since", "7d", "--any-repo", "--json", "--url", served)
    for command in (("search", "vendor cache"), ("list",)):
        code, out, err = await run(*command, *window)
        assert code == 0, err
        answer = json.loads(out)
        shown = [m.get("memory", m) for m in answer.get("results", answer.get("memories"))]
        assert [m["content"] for m in shown] == ["Vendor the npm cache in CI"], command
    exported = tmp_path / "recent.jsonl"
    code, _, err = await run(
        "export", "--until", "7d", "--any-repo", "-o", str(exported), "--url", served
    )
    assert code == 0, err
    assert json.loads(exported.read_text().splitlines()[0])["count"] == 1


async def test_export_to_a_folder_is_refused_before_anything_is_read(tmp_path: Path) -> None:
    # The server is not even asked (its URL answers nothing): the folder is named first.
    code, _, err = await run("export", "-o", str(tmp_path), "--url", "http://127.0.0.1:9")
    assert code == 2 and "Traceback" not in err
    assert err.strip().splitlines() == [
        f"agent-memory export: {tmp_path} is a folder; name a file in it"
        f" ({tmp_path / 'memories.jsonl'}, say)"
    ]
    assert os.listdir(tmp_path) == []


async def test_search_says_which_memories_it_read(served: str, tmp_path: Path) -> None:
    """Inside a folder the search scopes to its repository: when nothing matches it says
    which, so a newcomer knows why (and how to read every repository's)."""
    folder = tmp_path / "notes"
    folder.mkdir()
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "app.cli", "search", "postgres version", "--url", served,
        cwd=folder, env={**os.environ, "LOG_FORMAT": "json"},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0
    assert err.decode().strip() == (
        'no memories match in "notes" and the global memories (--any-repo: all)'
    )


async def test_export_reads_the_repository_here_as_list_does_and_says_so(
    served: str, tmp_path: Path
) -> None:
    """`export` reads what `list` reads by default, the repository here, and says which
    (and that --any-repo exports the rest), so that a backup's scope is never a surprise."""
    folder = tmp_path / "notes"
    folder.mkdir()
    async with httpx.AsyncClient(base_url=served) as http:
        for repo in ("notes", None, "acme/api"):
            body = {"content": f"Filed under {repo} for the export scope", "source_repo": repo}
            assert (await http.post("/memories", json=body)).status_code == 201
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "app.cli", "export", "-o", "out.jsonl", "--url", served,
        cwd=folder, env={**os.environ, "LOG_FORMAT": "json"},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, err
    [header, line] = (folder / "out.jsonl").read_text().splitlines()
    assert json.loads(header)["source_repo"] == "notes"
    assert json.loads(line)["content"] == "Filed under notes for the export scope"
    assert (
        err.decode()
        .strip()
        .endswith(
            'exported 1 memory and 0 sessions of "notes" (not the global memories nor other'
            " repositories: --any-repo exports them all) to out.jsonl"
        )
    )


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("import", "/no/such/file.jsonl"), "agent-memory import: cannot read /no/such/file.jsonl"),
        (("export", "-o", "/no/such/dir/x.jsonl"), "agent-memory export: no such folder"),
        (("list", "--limit", "0"), "agent-memory list: --limit must be 1 to 200, not 0"),
        (("search", "x", "--limit", "101"), "agent-memory search: --limit must be 1 to 100"),
        (
            ("show", "not-a-uuid"),
            "agent-memory show: 'not-a-uuid' is not a memory id nor the start",
        ),
        (("show", "0193c"), "(6 or more of its hex digits, as `list` shows them)"),
        (("list", "--url", "ftp://localhost:8080"), "must start with http:// or https://"),
    ],
)
async def test_expected_failures_are_one_line(args: tuple[str, ...], said: str) -> None:
    code, _, err = (
        await run(*args, "--url", "http://127.0.0.1:9")
        if "--url" not in args
        else (await run(*args))
    )
    assert code != 0
    assert len(err.strip().splitlines()) == 1 and said in err, err


async def test_a_url_without_a_scheme_is_taken_as_http(served: str) -> None:
    code, _, err = await run("list", "--url", served.removeprefix("http://"))
    assert code == 0, err


async def test_an_agent_keys_refusal_reads_well(served: str, db: asyncpg.Connection) -> None:
    key = (await KeyService.on_connection(db).create("default", "cli", "agent")).key
    code, _, err = await run("audit", "--url", served, "--api-key", key)
    assert code == 1 and "an agent key may not do this (admin)" in err


async def test_explain_search_prints_the_statement_and_its_plan(
    database_url: str, tmp_path: Path
) -> None:
    code, out, err = await run(
        "explain-search", "flaky test in CI", "--source-repo", "acme/api", DATABASE_URL=database_url
    )
    assert code == 0, err
    assert "WITH model_check AS" in out and "\\set tenant_id " in out
    assert "-- EXPLAIN (ANALYZE, BUFFERS)" in out and "Execution Time" in out
    # What it prints runs in psql as it is (the plan below it is comments).
    await runs_in_psql(out, database_url, tmp_path)


async def test_isolating_a_tenant_on_one_postgresql_is_refused_with_its_reason(
    database_url: str,
) -> None:
    code, out, err = await run(
        "isolate-tenant", "acme", "--to", "10.0.0.5:5432", DATABASE_URL=database_url
    )
    assert (code, out) == (2, "")
    assert err.strip().splitlines() == [
        "agent-memory isolate-tenant: this database is one PostgreSQL, not a Citus coordinator:"
        " every tenant is already on the one server"
    ]


async def test_every_write_says_where_it_was_filed_and_every_line_shows_it(
    served: str, db: asyncpg.Connection
) -> None:
    """`remember` names the repository it filed under, or says the memory is global; with
    --type and --tags it is stored as given; `list` shows each memory's repository, or
    `global`."""
    code, out, err = await run(
        "remember", "Run the integration tests with make itest, never plain pytest",
        "--source-repo", "acme/api", "--url", served,
    )  # fmt: skip
    assert code == 0, err
    assert out.strip().endswith('; filed under "acme/api"')
    code, out, err = await run(
        "remember", "Use pnpm, not npm, in every repository of the team",
        "--global", "--type", "decision", "--tags", "js,tooling", "--url", served,
    )  # fmt: skip
    assert code == 0, err
    assert out.startswith("Stored: decision ")
    assert out.strip().endswith("; global: every repository's sessions see it")
    row = await db.fetchrow("SELECT memory_type, tags, source_repo FROM memories WHERE"
                            " content LIKE 'Use pnpm%'")  # fmt: skip
    assert dict(row) == {"memory_type": "decision", "tags": ["js", "tooling"], "source_repo": None}
    code, out, _ = await run("list", "--any-repo", "--url", served)
    lines = {line.split()[2] for line in out.splitlines()}
    assert lines == {"acme/api", "global"}


async def test_keys_made_on_the_server_are_in_the_tenants_audit_trail(
    database_url: str, db: asyncpg.Connection
) -> None:
    """`agent-memory keys` works with the database owner's access, across tenants: each
    key it makes or revokes is recorded in that key's tenant's trail, as the operator's."""
    try:
        code, _, err = await run(
            "keys", "create", "--tenant", "acme", "--name", "ci bot", "--role", "agent",
            DATABASE_URL=database_url,
        )  # fmt: skip
        assert code == 0, err
        key_id = err.split(" key ", 1)[1].split()[0]
        code, _, err = await run("keys", "revoke", key_id, DATABASE_URL=database_url)
        assert code == 0, err
        rows = await db.fetch(
            "SELECT action, actor_role, actor_key, detail FROM audit_log"
            " WHERE tenant_id = 'acme' ORDER BY at"
        )
        assert [(r["action"], r["actor_role"], r["actor_key"]) for r in rows] == [
            ("key_create", "operator", None), ("key_revoke", "operator", None),
        ]  # fmt: skip
        assert json.loads(rows[0]["detail"]) == {"key": key_id, "name": "ci bot", "role": "agent"}
        # Written as the tenant's: it passes the trail's forced row security under a role
        # that does not bypass it (a non-superuser owner's; here the service's own).
        await db.execute("SET ROLE agent_memory_app")
        try:
            await record_operator_entry(db, "acme", "key_create", {"name": "under row security"})
        finally:
            await db.execute("RESET ROLE")
        assert await db.fetchval("SELECT count(*) FROM audit_log WHERE tenant_id = 'acme'") == 3
    finally:
        await db.execute("TRUNCATE api_keys, audit_log CASCADE")


async def test_show_takes_the_start_of_an_id_and_says_when_it_is_ambiguous(
    served: str, db: asyncpg.Connection
) -> None:
    """UUIDv7 ids written together share their start: `show` takes as much of an id as
    tells it apart, and when a prefix fits several it names them and asks for more."""
    async with httpx.AsyncClient(base_url=served) as api:
        batch = [
            {"content": f"Deploys to {env} go through the release train", "source_repo": None}
            for env in ("staging", "production")
        ]
        answer = await api.post("/memories/batch", json={"memories": batch})
        assert answer.status_code == 200, answer.text
    first, second = sorted(r["memory"]["id"] for r in answer.json()["results"])
    digits = [a == b for a, b in zip(first.replace("-", ""), second.replace("-", ""), strict=True)]
    shared = digits.index(False)  # hex digits the two ids have in common
    assert shared >= 6
    code, _, err = await run("show", first.replace("-", "")[:shared], "--url", served)
    assert code == 1
    assert f"2 memories start with '{first.replace('-', '')[:shared]}': {first}, {second}" in err
    assert err.strip().endswith("give more of the id")
    # As a listing shows it, dashes and all: the shortest start that is first's alone.
    unique = next(first[:k] for k in range(37) if len(first[:k].replace("-", "")) > shared)
    code, out, err = await run("show", unique.upper(), "--url", served)
    assert code == 0, err
    assert out.startswith("Deploys to ")
    assert f"id: {first}" in out


async def test_a_persons_note_from_the_shell_has_the_consoles_trust(
    served: str, db: asyncpg.Connection
) -> None:
    """`remember` from a shell is a person's own words: the trust the console gives them
    (Principal.own_words_trust), `user` where the key may vouch for them, else an agent's;
    a key that may not write at all is refused once, not asked again as an agent."""
    keys = KeyService.on_connection(db)
    for role in ("admin", "agent", "reader"):
        key = (await keys.create("default", f"cli-{role}", role)).key
        text = f"The {role} said the release train leaves on Tuesdays"
        code, _, err = await run(
            "remember", text, "--source-repo", "acme/api", "--url", served, "--api-key", key
        )
        trust = await db.fetchval("SELECT trust_level FROM memories WHERE content = $1", text)
        if role == "reader":
            assert code == 1 and "a reader key may not do this (write)" in err and trust is None
        else:
            assert code == 0, err
            assert trust == Principal("default", role, None).own_words_trust


def test_a_persons_note_is_asked_again_as_an_agents_only_when_refused_for_its_trust() -> None:
    """One refusal only means "not this key's to vouch for": 403 naming trust_level alone.
    Any other (a reader's 403, a 422 on trust_level, a 403 naming more) is the answer."""
    asked: list[dict[str, str]] = []

    def refused_with(*refusals: ClientError) -> Any:
        waiting = list(refusals)
        asked.clear()

        def write(trust: dict[str, str]) -> str:
            asked.append(trust)
            if waiting:
                raise waiting.pop(0)
            return "stored"

        return as_person(write)

    agent_key = ClientError(403, "an agent key may not write trust_level 'user'", ["trust_level"])
    assert refused_with(agent_key) == "stored"
    assert asked == [{"trust_level": "user"}, {}]
    assert refused_with() == "stored" and asked == [{"trust_level": "user"}]
    for other in (
        ClientError(403, "a reader key may not do this (write)"),
        ClientError(422, "invalid trust_level", ["trust_level"]),
        ClientError(403, "refused", ["trust_level", "text"]),
        ClientError(0, "agent-memory is not reachable"),
    ):
        with pytest.raises(ClientError):
            refused_with(other)
        assert asked == [{"trust_level": "user"}]


def test_a_note_an_agent_writes_through_the_shell_is_an_agents(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In an agent's shell (each client marks it: CLAUDECODE, CODEX_THREAD_ID, GEMINI_CLI,
    ...) `remember` is the agent's, never asked as a person's, whatever the key: a page the
    agent read may be what asked it to remember."""
    asked: list[dict[str, str]] = []

    def write(trust: dict[str, str]) -> str:
        asked.append(trust)
        return "stored"

    for marker in AGENT_SHELL_MARKERS:
        for other in AGENT_SHELL_MARKERS:
            monkeypatch.delenv(other, raising=False)
        monkeypatch.setenv(marker, "1")
        asked.clear()
        assert as_person(write) == "stored" and asked == [{}], marker


async def test_people_are_added_listed_and_removed_after_an_export_of_their_own(
    database_url: str, db: asyncpg.Connection, tmp_path: Path, served: str
) -> None:
    """`keys create --person` makes the person on first use; `people remove --export` writes
    their personal memories to a file `import` takes, then revokes their keys and deletes
    those memories; the team's stay."""
    try:
        code, key, err = await run(
            "keys", "create", "--tenant", "default", "--name", "dana laptop", "--role", "agent",
            "--person", "dana", DATABASE_URL=database_url,
        )  # fmt: skip
        assert code == 0 and "acting for dana" in err, err
        for text, personal in (
            ("Dana reads diffs in the split view, never unified", ["--personal"]),
            ("The billing service owns the invoices table", []),
        ):
            code, out, err = await run(
                "remember", text, "--global", *personal, "--url", served,
                "--api-key", key.strip(),
            )  # fmt: skip
            assert code == 0, err
            assert ("personal: only your keys are handed it" in out) == bool(personal)
        code, out, err = await run("people", "list", DATABASE_URL=database_url)
        assert code == 0, err
        assert "dana  keys: 1  personal memories: 1" in out
        exported = tmp_path / "dana.jsonl"
        code, _, err = await run(
            "people", "remove", "dana", "--export", str(exported), DATABASE_URL=database_url
        )
        assert code == 0, err
        assert "exported 1 personal memories of dana" in err
        assert "1 keys revoked, 1 personal memories deleted" in err
        header, *lines = exported.read_text().splitlines()
        assert json.loads(header)["count"] == 1
        assert [json.loads(line)["content"] for line in lines] == [
            "Dana reads diffs in the split view, never unified"
        ]
        assert await db.fetchval("SELECT count(*) FROM memories WHERE personal") == 0
        team = await db.fetchval(
            "SELECT count(*) FROM memories WHERE content LIKE 'The billing service%'"
        )
        assert team == 1
        code, _, err = await run("people", "forget", "dana", DATABASE_URL=database_url)
        assert code != 0 and "no person named 'dana'" in err
        code, _, err = await run("people", "remove", "dana", DATABASE_URL=database_url)
        assert code != 0 and "no person named 'dana'" in err
    finally:
        await db.execute("TRUNCATE memories, api_keys, people, audit_log CASCADE")
