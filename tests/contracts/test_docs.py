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


# What a doc names of the code: `app/...py` paths (and globs), and symbols it places in one
# ("`name` (`path`)", "`name` in `path`", "(`path`, `name`)", "`path`'s `name`"). A rename
# that leaves a doc behind fails here.
CODE_ROOTS = ("app", "client", "tests", "bench", "migrations", "scripts")
NAMED_PATH = re.compile(
    r"`(?:\./)?((?:app|client|tests|bench|migrations|scripts|integrations|docs"
    r"|\.ci)/[\w./*<>-]+)`"
)
CODE_PATH = r"(?:app|client|tests|bench|migrations|scripts)/[\w./-]+\.(?:py|sql)"
SYMBOL = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?"
PLACED = [
    re.compile(rf"`(?P<symbol>{SYMBOL})(?:\(\))?` \(`(?P<path>{CODE_PATH})`"),
    re.compile(rf"`(?P<symbol>{SYMBOL})(?:\(\))?` in `(?P<path>{CODE_PATH})`"),
    re.compile(rf"\(`(?P<path>{CODE_PATH})`, `(?P<symbol>{SYMBOL})(?:\(\))?`"),
    re.compile(rf"`(?P<path>{CODE_PATH})`'s `(?P<symbol>{SYMBOL})(?:\(\))?`"),
]
# A module's own name (`_written_out`): named anywhere, it must be defined somewhere.
PRIVATE = re.compile(r"`(_[a-z][a-z0-9_]+)(?:\(\))?`")


def describing() -> list[Path]:
    """The docs that describe the code as it is (the changelog tells what it was)."""
    return [d for d in documents() if d.name != "CHANGELOG.md"]


def defines(text: str, symbol: str) -> bool:
    name = re.escape(symbol.split(".")[-1])
    return bool(
        re.search(
            rf"^\s*(?:async\s+def|def|class)\s+{name}\b|^\s*{name}\s*(?::[^=\n]*)?="
            rf"|FUNCTION\s+(?:public\.)?{name}\b",
            text,
            re.M | re.I,
        )
    )


def test_every_path_a_doc_names_exists() -> None:
    missing = []
    for document in describing():
        for n, line in enumerate(document.read_text().splitlines(), 1):
            for named in NAMED_PATH.findall(line):
                pattern = re.sub(r"<[^>]*>", "*", named.rstrip(".,:"))
                if not any(ROOT.glob(pattern)) and not (ROOT / pattern).exists():
                    missing.append(f"{document.relative_to(ROOT)}:{n}: {named}")
    assert not missing, "\n".join(missing)


def test_every_symbol_a_doc_places_is_there() -> None:
    code = {
        path: path.read_text(errors="replace")
        for root in CODE_ROOTS
        for path in (ROOT / root).rglob("*")
        if path.suffix in (".py", ".sql")
    }
    wrong = []
    for document in describing():
        for n, line in enumerate(document.read_text().splitlines(), 1):
            where = f"{document.relative_to(ROOT)}:{n}"
            for placed in PLACED:
                for found in placed.finditer(line):
                    text = code.get(ROOT / found["path"], "")
                    if not defines(text, found["symbol"]):
                        wrong.append(f"{where}: `{found['symbol']}` is not in {found['path']}")
            for private in PRIVATE.findall(line):
                if not any(defines(text, private) for text in code.values()):
                    wrong.append(f"{where}: `{private}` is defined nowhere")
    assert not wrong, "\n".join(wrong)


def test_every_bench_is_cited_by_a_doc_or_serves_one_that_is() -> None:
    """A bench makes a figure a doc cites (`bench.name`); a finished experiment's result and
    command move to the docs and its code goes (git keeps it). A helper other benches or
    tests import needs no citation of its own."""
    docs = "\n".join(document.read_text() for document in describing())
    imported = "\n".join(
        path.read_text() for root in ("bench", "tests") for path in (ROOT / root).rglob("*.py")
    )
    uncited = [
        bench.name
        for bench in sorted((ROOT / "bench").glob("*.py"))
        if bench.stem != "__init__"
        and not re.search(rf"bench[./]{bench.stem}\b", docs)
        and not re.search(
            rf"from bench(?:\.{bench.stem} import| import .*\b{bench.stem}\b)", imported
        )
    ]
    assert not uncited, f"bench modules no doc cites: {uncited}"
