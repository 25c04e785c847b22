"""The OpenAPI document teaches: every operation has a summary and an example, and every
request example is one the server accepts."""

from __future__ import annotations

import re
from typing import Any

import httpx

Spec = dict[str, Any]


def schema_of(spec: Spec, schema: Any) -> Any:
    """A body's schema, its $ref followed (an optional body: its first alternative)."""
    if isinstance(schema, dict) and "anyOf" in schema:
        schema = schema["anyOf"][0]
    if isinstance(schema, dict) and "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return spec["components"]["schemas"][name]
    return schema


def examples_of(spec: Spec, operation: Spec) -> list[Any]:
    found: list[Any] = []
    for parameter in operation.get("parameters", []):
        found += parameter.get("examples", []) or []
        found += parameter.get("schema", {}).get("examples", []) or []
    for content in operation.get("requestBody", {}).get("content", {}).values():
        found += [content["example"]] if "example" in content else []
        found += schema_of(spec, content.get("schema", {})).get("examples", [])
    for status, response in operation.get("responses", {}).items():
        for content in response.get("content", {}).values():
            if status.startswith("2") and "example" in content:
                found.append(content["example"])
    return found


async def test_every_operation_has_a_summary_and_an_example(api: httpx.AsyncClient) -> None:
    spec = (await api.get("/openapi.json")).json()
    operations = [(m, p, op) for p, ops in spec["paths"].items() for m, op in ops.items()]
    assert len(operations) >= 28
    for method, path, operation in operations:
        summary = operation.get("summary", "")
        # FastAPI's fallback is the function's name in Title Case; ours are sentences.
        assert summary and not summary.istitle(), (method, path, summary)
        assert operation.get("description"), (method, path)
        assert examples_of(spec, operation), (method, path)


async def test_the_published_document_names_the_text_rule_and_the_full_one_states_it(
    api: httpx.AsyncClient,
) -> None:
    """/openapi.json (and /docs) is for people: the text rule's 10,000-character pattern is
    named in words there. /openapi.full.json, which the contract test runs on, keeps it."""
    published = await api.get("/openapi.json")
    full = await api.get("/openapi.full.json")
    assert published.status_code == full.status_code == 200
    assert len(full.content) > 4 * len(published.content)

    def patterns(node: Any) -> list[str]:
        if isinstance(node, dict):
            own = [node["pattern"]] if isinstance(node.get("pattern"), str) else []
            return own + [p for value in node.values() for p in patterns(value)]
        if isinstance(node, list):
            return [p for value in node for p in patterns(value)]
        return []

    assert max(len(p) for p in patterns(published.json())) <= 300
    assert max(len(p) for p in patterns(full.json())) > 10_000
    content = published.json()["components"]["schemas"]["MemoryIn"]["properties"]["content"]
    assert "Visible text: no control, invisible or direction-changing" in content["description"]
    assert set(published.json()["paths"]) == set(full.json()["paths"])


async def test_every_request_example_is_accepted(api: httpx.AsyncClient) -> None:
    spec = (await api.get("/openapi.json")).json()
    memory = (
        await api.post(
            "/memories", json={"content": "A memory the examples act on", "source_repo": None}
        )
    ).json()
    session = (await api.post("/sessions", json={})).json()
    ids = {"{memory_id}": memory["memory"]["id"], "{session_id}": session["session_id"]}
    tried = 0
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            content = operation.get("requestBody", {}).get("content", {})
            schema = schema_of(spec, content.get("application/json", {}).get("schema", {}))
            for example in schema.get("examples", []):
                if "{session_id}" in path:  # each its own: an example may end the session
                    started = await api.post("/sessions", json={})
                    ids["{session_id}"] = started.json()["session_id"]
                if "{draft_id}" in path:  # each its own: keeping one decides it
                    draft = {
                        "kind": "instruction", "text": f"Always run make lint ({tried}).",
                        "source_repo": "acme/api", "client": "codex", "client_session": "s",
                    }  # fmt: skip
                    queued = await api.post("/drafts", json={"drafts": [draft]})
                    ids["{draft_id}"] = queued.json()["queued"][0]
                url = path
                for placeholder, value in ids.items():
                    url = url.replace(placeholder, value)
                answer = await api.request(method, url, json=example)
                assert answer.status_code < 400, (method, path, answer.text)
                tried += 1
    assert tried >= 12


async def test_interactive_docs_load_nothing_from_another_host(api: httpx.AsyncClient) -> None:
    for page in ("/docs", "/redoc"):
        html = (await api.get(page)).text
        sources = re.findall(r'(?:src|href)="([^"]+)"', html)
        assert sources, page
        for source in sources:
            assert source.startswith("/"), (page, source)  # same origin, no CDN
            assert (await api.get(source)).status_code == 200, source
        assert "https://" not in html.replace("https://fastapi.tiangolo.com", ""), page
