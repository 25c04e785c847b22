"""The real server as a subprocess (uvicorn + the embedded database in a directory)."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def start_server(data_dir: Path, port: int, **settings: str) -> asyncio.subprocess.Process:
    env = {**os.environ, "LOG_LEVEL": "WARNING", "PRUNE_INTERVAL_S": "0", **settings}
    env.pop("DATABASE_URL", None)
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "app.cli",
        "serve",
        "--port",
        str(port),
        "--data-dir",
        str(data_dir),
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )


async def wait_until_ready(client: httpx.AsyncClient, process: asyncio.subprocess.Process) -> None:
    for _ in range(600):  # up to 60 s, polling the real server
        assert process.returncode is None, "server exited during start-up"
        try:
            if (await client.get("/readyz")).status_code == 200:
                return
        except httpx.TransportError:
            pass
        await asyncio.sleep(0.1)
    raise AssertionError("server not ready")
