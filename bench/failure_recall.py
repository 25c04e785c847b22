"""Recall on a failed command (the PostToolUseFailure hook), on error patterns built from
real error messages of pytest, pip, npm, git and psql: each failing output is recalled with
the hook's query (its last error lines) against a repository holding every pattern. Found:
the pattern written for that error is handed over. False injection: something is handed over
for a failure no pattern is about. Side by side for gates around the prompt's.

    .venv/bin/python -m bench.failure_recall
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from agent_memory_client.drafting import error_query
from app.config import Settings
from app.logging import configure_logging
from app.main import create_app
from bench.recall_gate import handed
from bench.support import fresh_database

GATES = (0.35, 0.40, 0.45, 0.50, 0.55)
REPO = "acme/api"

# (the pattern an agent stored, a failing output it is about)
CASES: list[tuple[str, str]] = [
    (
        "ModuleNotFoundError: No module named 'yaml' in the tests means the dev extras are missing:"
        " pip install -e '.[dev]'",
        "ImportError while importing test module '/src/tests/test_config.py'.\nTraceback:\n"
        "tests/test_config.py:3: in <module>\n    import yaml\nE   ModuleNotFoundError: No module"
        " named 'yaml'",
    ),
    (
        "pytest fixture 'db' not found: the fixture lives in tests/conftest.py, run pytest from the"
        " repository root",
        "E       fixture 'db' not found\n>       available fixtures: cache, capfd, capsys\n>"
        "       use 'pytest --fixtures [testpath]' for help on them.",
    ),
    (
        "PermissionError on /tmp/upload in test_upload: tests shared one temp dir; use tmp_path",
        "E   PermissionError: [Errno 13] Permission denied: '/tmp/upload/part-0001'\n"
        "FAILED tests/test_upload.py::test_resume - PermissionError",
    ),
    (
        "pip fails with 'externally-managed-environment' on the system Python: use the project's"
        " .venv (./scripts/bootstrap)",
        "error: externally-managed-environment\n\n× This environment is externally managed\n"
        "╰─> To install Python packages system-wide, try apt install python3-xyz",
    ),
    (
        "pip 'Could not find a version that satisfies the requirement torch==2.9' on Python 3.14:"
        " pin Python 3.11 in the image",
        "ERROR: Could not find a version that satisfies the requirement torch==2.9 (from versions:"
        " none)\nERROR: No matching distribution found for torch==2.9",
    ),
    (
        "npm ERESOLVE peer dependency conflict between react 19 and the charts package: install"
        " with --legacy-peer-deps until charts supports react 19",
        "npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree\nnpm ERR!"
        ' Found: react@19.0.0\nnpm ERR! Could not resolve dependency:\nnpm ERR! peer react@"^18"'
        " from react-charts@4.2.0",
    ),
    (
        "npm run build fails with 'JavaScript heap out of memory': set NODE_OPTIONS="
        "--max-old-space-size=4096 for the build",
        "<--- Last few GCs --->\nFATAL ERROR: Reached heap limit Allocation failed - JavaScript"
        " heap out of memory\n 1: 0xb090e0 node::Abort() [node]",
    ),
    (
        "Cannot find module '@/lib/api' in jest: map the @ alias in jest.config moduleNameMapper",
        "Cannot find module '@/lib/api' from 'src/components/Plans.test.tsx'\n\n    at"
        " Resolver._throwModNotFoundError (node_modules/jest-resolve/build/resolver.js:427:11)",
    ),
    (
        "git push rejected (non-fast-forward) on main: pull with --rebase, never merge main into"
        " itself",
        "To github.com:acme/api.git\n ! [rejected]        main -> main (non-fast-forward)\n"
        "error: failed to push some refs to 'github.com:acme/api.git'",
    ),
    (
        "git 'detected dubious ownership in repository' in the container: add it to safe.directory",
        "fatal: detected dubious ownership in repository at '/src'\nTo add an exception for this"
        " directory, call:\n\n\tgit config --global --add safe.directory /src",
    ),
    (
        "psql 'relation \"plans\" does not exist': the migrations were not run; alembic upgrade"
        " head first",
        'ERROR:  relation "plans" does not exist\nLINE 1: select * from plans\n'
        "                      ^",
    ),
    (
        "psql 'role \"app\" does not exist' in CI: the service container creates only postgres;"
        " connect as postgres",
        'psql: error: connection to server on socket "/var/run/postgresql/.s.PGSQL.5432"'
        ' failed: FATAL:  role "app" does not exist',
    ),
    (
        "asyncpg 'too many connections for role' under load: lower DB_POOL_MAX, the server's"
        " max_connections is 100",
        "asyncpg.exceptions.TooManyConnectionsError: sorry, too many clients already",
    ),
    (
        "mypy 'Module has no attribute \"UTC\"' means Python 3.10: the project needs 3.11",
        'app/clock.py:4: error: Module "datetime" has no attribute "UTC"  [attr-defined]\n'
        "Found 1 error in 1 file (checked 88 source files)",
    ),
    (
        "docker 'no space left on device' during build: prune the builder cache (docker builder"
        " prune)",
        "ERROR: failed to solve: failed to copy files: write /var/lib/docker/tmp/x: no space left"
        " on device",
    ),
]
# Failures no stored pattern is about.
UNRELATED = [
    "E   AssertionError: assert 3 == 4\nFAILED tests/test_math.py::test_add - assert 3 == 4",
    "SyntaxError: invalid syntax (app/views.py, line 12)",
    'npm ERR! missing script: "lint"',
    "fatal: not a git repository (or any of the parent directories): .git",
    'ERROR:  syntax error at or near "selec"\nLINE 1: selec 1;\n        ^',
    "curl: (7) Failed to connect to localhost port 8080 after 0 ms: Connection refused",
    "make: *** No rule to make target 'deploy'.  Stop.",
    "TypeError: Cannot read properties of undefined (reading 'map')\n    at Plans (Plans.tsx:14)",
    "error[E0308]: mismatched types\n  --> src/main.rs:4:18",
    "KeyError: 'DATABASE_URL'",
]


async def hits(client: httpx.AsyncClient, output: str) -> list[dict[str, Any]]:
    body = {"q": error_query(output), "source_repo": REPO, "limit": 10, "track_access": False,
            "memory_type": ["error_pattern"], "scope": "repo"}  # fmt: skip
    answer = await client.post("/search", json=body)
    answer.raise_for_status()
    return [
        {"content": r["memory"]["content"], "vector_similarity": r["vector_similarity"]}
        for r in answer.json()["results"]
    ]


async def main() -> None:
    configure_logging("WARNING")
    async with fresh_database("agent_memory_bench_failures") as url:
        app = create_app(Settings(database_url=url), database_url=url)
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as c:
                for pattern, _ in CASES:
                    body = {"content": pattern, "memory_type": "error_pattern", "source_repo": REPO}
                    (await c.post("/memories", json=body)).raise_for_status()
                found = [(p, await hits(c, output)) for p, output in CASES]
                unrelated = [await hits(c, output) for output in UNRELATED]
    print(f"{len(CASES)} failures with a pattern, {len(UNRELATED)} without; budget 300 tokens\n")
    print("| gate | its fix handed over | something handed over, no pattern about it |")
    print("|---|---|---|")
    for gate in GATES:
        got = sum(any(h["content"] == p for h in handed(r, gate, 300)) for p, r in found)
        false = sum(bool(handed(r, gate, 300)) for r in unrelated)
        print(f"| {gate:.2f} | {got}/{len(CASES)} | {false}/{len(UNRELATED)} |")


if __name__ == "__main__":
    asyncio.run(main())
