"""Graceful shutdown: in-flight requests finish, the embedded database stops cleanly and
starts again with every acknowledged write present."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import httpx

from tests.server import launch


async def test_sigterm_finishes_in_flight_work_and_keeps_every_acknowledged_write(
    tmp_path: Path,
) -> None:
    process, base = await launch(tmp_path)
    try:
        async with httpx.AsyncClient(base_url=base, timeout=60) as client:
            acknowledged = await client.post(
                "/memories", json={"content": "written before", "source_repo": None}
            )
            assert acknowledged.status_code == 201
            batch = [
                {"content": f"in flight memory {i} with some words", "source_repo": None}
                for i in range(300)
            ]
            in_flight = asyncio.create_task(
                client.post("/memories/batch", json={"memories": batch})
            )
            await asyncio.sleep(0.5)  # the batch is being embedded now
            process.send_signal(signal.SIGTERM)
            response = await in_flight
            assert response.status_code == 200
            assert len(response.json()["results"]) == 300
        assert await asyncio.wait_for(process.wait(), 60) == 0
        # PostgreSQL removes its pid file only on a clean shutdown.
        assert not (tmp_path / "pgdata" / "postmaster.pid").exists()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()

    process, base = await launch(tmp_path)
    try:
        async with httpx.AsyncClient(base_url=base, timeout=60) as client:
            listed = await client.get("/memories", params={"limit": 200})
            page = listed.json()
            seen = len(page["memories"])
            while page["next_cursor"]:
                page = (
                    await client.get(
                        "/memories", params={"limit": 200, "cursor": page["next_cursor"]}
                    )
                ).json()
                seen += len(page["memories"])
            assert seen == 301
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
            await asyncio.wait_for(process.wait(), 60)
