"""Keys a test makes through the API."""

from __future__ import annotations

import httpx


async def admin_and_agent(api: httpx.AsyncClient) -> tuple[dict[str, str], dict[str, str]]:
    """Open mode's first key (an admin's), then an agent's: each as a request's headers."""
    admin = (await api.post("/admin/keys", json={"name": "me", "role": "admin"})).json()["key"]
    owner = {"Authorization": f"Bearer {admin}"}
    made = await api.post("/admin/keys", json={"name": "agent", "role": "agent"}, headers=owner)
    return owner, {"Authorization": f"Bearer {made.json()['key']}"}
