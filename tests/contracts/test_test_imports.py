"""No module of the tests imports from a test module (a file named test_*.py): what more than
one test uses lives in tests/helpers/ or, as a fixture, in its directory's conftest.py. A
test module imported by another is collected twice over, and its helpers are found only by
reading the tests that happen to define them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"


def is_test_module(dotted: str) -> bool:
    parts = dotted.split(".")
    return parts[0] == "tests" and parts[-1].startswith("test_")


def imported_test_modules(source: str, module: str) -> list[str]:
    """The test modules that `source`, the text of the module named `module`, imports, at
    its top or inside a function: by `import`, `from ... import` (a module, or a name of
    one), absolute or relative."""
    package = module.split(".")[:-1]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if is_test_module(alias.name)]
        elif isinstance(node, ast.ImportFrom):
            base = node.module.split(".") if node.module else []
            if node.level:
                base = package[: len(package) - (node.level - 1)] + base
            named = ".".join(base)
            if is_test_module(named):
                found.append(named)
            found += [
                f"{named}.{a.name}" for a in node.names if is_test_module(f"{named}.{a.name}")
            ]
    return found


@pytest.mark.parametrize(
    ("source", "module", "imported"),
    [
        ("from tests.cli.test_cli import run", "tests.a.test_b", ["tests.cli.test_cli"]),
        ("import tests.cli.test_cli", "tests.a.test_b", ["tests.cli.test_cli"]),
        ("from tests.cli import test_cli", "tests.a.test_b", ["tests.cli.test_cli"]),
        ("from .test_cli import run", "tests.cli.test_b", ["tests.cli.test_cli"]),
        ("from ..cli.test_cli import run", "tests.a.test_b", ["tests.cli.test_cli"]),
        ("def f():\n    from tests.cli.test_cli import run", "tests.a.b", ["tests.cli.test_cli"]),
        ("from tests.helpers.cli import run", "tests.a.test_b", []),
        ("from tests.conftest import running", "tests.a.test_b", []),
        ("from app.cli import test_mode", "tests.a.test_b", []),
    ],
)
def test_what_counts_as_importing_a_test_module(
    source: str, module: str, imported: list[str]
) -> None:
    assert imported_test_modules(source, module) == imported


def test_no_module_of_the_tests_imports_a_test_module() -> None:
    wrong = []
    for path in sorted(TESTS.rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        wrong += [
            f"{path.relative_to(ROOT)} imports {name}"
            for name in imported_test_modules(path.read_text(), module)
        ]
    assert not wrong, "\n".join(wrong)
