"""Property-based API testing with schemathesis against the running server's own OpenAPI,
once with a key of each role, with every check: no 5xx; every response documented and
matching its schema; every request the schema allows accepted (positive data acceptance)
and every request it forbids refused (negative data rejection), which holds the published
limits, patterns and ranges to what the domain enforces; an undocumented method answered
405 with an Allow header. Bounded: 5 examples per operation and role.

The coverage phase (every boundary of every keyword, some 5,000 requests a role) takes
about five minutes a role: `scripts/contract` runs it, with SCHEMATHESIS_PHASES."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import httpx

from tests.server import launch

# Every check is on by default; a --checks option would override the file's per-operation
# exception.
CONFIG = Path(__file__).with_name("schemathesis.toml")


async def test_schemathesis_finds_no_server_error_and_no_schema_violation(tmp_path: Path) -> None:
    # The hash provider: the rules under test do not depend on the model, and it keeps
    # thousands of writes cheap.
    server, base = await launch(tmp_path, RATE_LIMIT_PER_MINUTE="0", EMBEDDING_PROVIDER="hash")
    try:
        async with httpx.AsyncClient(base_url=base, timeout=60) as client:
            # Open mode: the first key is created by the (admin) anonymous caller.
            # Each key acts for a person, so that a personal memory is a write it may make.
            created = await client.post(
                "/admin/keys", json={"name": "fuzz", "role": "admin", "person": "fuzz"}
            )
            admin = created.json()["key"]
            keys = {"admin": admin}
            for role in ("agent", "reader"):
                made = await client.post(
                    "/admin/keys",
                    json={"name": f"fuzz {role}", "role": role, "person": f"fuzz {role}"},
                    headers={"Authorization": f"Bearer {admin}"},
                )
                keys[role] = made.json()["key"]
            # OPTIONS names what a route allows (schemathesis leaves OPTIONS alone).
            options = await client.options("/memories")
            assert options.status_code == 204
            assert options.headers["allow"] == "GET, OPTIONS, POST"
        for role, key in keys.items():
            await fuzz(base, key, role)
    finally:
        if server.returncode is None:
            server.send_signal(signal.SIGTERM)
            await asyncio.wait_for(server.wait(), 60)


async def fuzz(base: str, key: str, role: str) -> None:
    # The rule a pattern cannot state (one script per identifier) is filtered out of the
    # generated data by tests/api/schemathesis_hooks.py.
    hooks = {**os.environ, "SCHEMATHESIS_HOOKS": "tests.api.schemathesis_hooks"}
    run = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "schemathesis.cli",
        "--config-file",
        str(CONFIG),
        "run",
        f"{base}/openapi.full.json",
        "-H",
        f"Authorization: Bearer {key}",
        "--phases",
        os.environ.get("SCHEMATHESIS_PHASES", "examples,fuzzing,stateful"),
        "--max-examples",
        "5",
        "--request-timeout",
        "30",
        "--workers",
        "1",
        "--exclude-path",
        "/admin/keys/{key_id}",  # revoking its own key ends the run
        "--exclude-path",
        "/memories/import",  # an NDJSON body, which it cannot generate; see test_transfer.py
        "--seed",
        "1",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=hooks,
    )
    output, _ = await asyncio.wait_for(run.communicate(), 1800)
    # The report, with each line cut short: a generated body can be a megabyte long.
    report = "\n".join(line[:400] for line in output.decode().splitlines())
    assert run.returncode == 0, f"as {role}:\n" + report[-20000:]
