"""The real server as a subprocess (uvicorn + the embedded database in a directory)."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from pathlib import Path

import httpx
from mcp import StdioServerParameters


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_log(data_dir: Path) -> Path:
    return data_dir / "server.log"


async def start_server(data_dir: Path, port: int, **settings: str) -> asyncio.subprocess.Process:
    env = {**os.environ, "LOG_LEVEL": "WARNING", "PRUNE_INTERVAL_S": "0", **settings}
    env.pop("DATABASE_URL", None)
    with server_log(data_dir).open("ab") as log:  # the child keeps its own descriptor
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
            stdout=log,
            stderr=log,
        )


class ServerExited(AssertionError):
    """The server process ended before it answered /readyz."""


async def launch(data_dir: Path, **settings: str) -> tuple[asyncio.subprocess.Process, str]:
    """Start the server and wait until ready; one retry on a fresh port if it exits early
    (a port taken between free_port() and the bind). The log says why, either way."""
    for attempt in (1, 2):
        port = free_port()
        process = await start_server(data_dir, port, **settings)
        base = f"http://127.0.0.1:{port}"
        try:
            async with httpx.AsyncClient(base_url=base, timeout=60) as client:
                await wait_until_ready(client, process, data_dir)
            return process, base
        except ServerExited:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


async def wait_until_ready(
    client: httpx.AsyncClient, process: asyncio.subprocess.Process, data_dir: Path
) -> None:
    for _ in range(600):  # up to 60 s, polling the real server
        if process.returncode is not None:
            tail = server_log(data_dir).read_text(errors="replace")[-3000:]
            raise ServerExited(f"server exited during start-up ({process.returncode}):\n{tail}")
        try:
            if (await client.get("/readyz")).status_code == 200:
                return
        except httpx.TransportError:
            pass
        await asyncio.sleep(0.1)
    raise AssertionError("server not ready")


def stdio_server(database_url: str, **env: str) -> StdioServerParameters:
    """`agent-memory mcp` over stdio against a database, with extra settings."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "app.cli", "mcp"],
        env={
            **os.environ,
            "DATABASE_URL": database_url,
            "LOG_LEVEL": "WARNING",
            "PRUNE_INTERVAL_S": "0",
            **env,
        },
    )
