"""The docs a newcomer reads: every relative link resolves, and the README stays short."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[2]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def documents() -> list[Path]:
    return [
        ROOT / "README.md",
        ROOT / "CHANGELOG.md",
        *sorted((ROOT / "docs").glob("*.md")),
        *sorted((ROOT / "integrations").rglob("*.md")),
    ]


def test_every_relative_link_resolves() -> None:
    broken = []
    for document in documents():
        for target in LINK.findall(document.read_text()):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue  # a URL or an anchor in the same page
            if not (document.parent / target.split("#")[0]).exists():
                broken.append(f"{document.relative_to(ROOT)}: {target}")
    assert not broken, "\n".join(broken)


def test_the_readme_is_a_newcomers_page() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) < 250
    for must in ("./scripts/run", "./scripts/test", "Connect your agent", "docs/api.md"):
        assert must in readme


def test_the_documented_mcp_tools_are_the_servers() -> None:
    from app.mcp.server import TOOLS

    section = (ROOT / "docs" / "api.md").read_text().split("## MCP", 1)[1].split("\n## ", 1)[0]
    listed = section.split("Tools: ", 1)[1].split(". Their", 1)[0]
    assert set(re.findall(r"`([a-z_]+)`", listed)) == {tool.__name__ for tool, _ in TOOLS}
