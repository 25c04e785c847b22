"""Every client is one adapter (clients/<client>.py), and each adapter declares all that the
hooks, the installer, import-history, import-files and distill read of it: a client added
without one of these, or with one that does not hold, fails here (docs/clients/README.md,
adding a client)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from agent_memory_client.clients import ADAPTERS, CLIENTS, DEFAULT_CLIENT, Adapter, named
from agent_memory_client.history import formats
from agent_memory_client.history.distill import CallFailed, Headless, distillers
from agent_memory_client.install import install, uninstall
from agent_memory_client.install.entries import is_ours, runs_our_bridge
from agent_memory_client.loop import Answer
from agent_memory_client.protocol import DRAFT_CLIENTS, FILE_CLIENT
from app.cli import files, history

BY_NAME = {adapter.name: adapter for adapter in ADAPTERS}


def test_each_client_has_one_agent_name_the_server_knows_and_one_alias() -> None:
    assert set(BY_NAME) == set(DRAFT_CLIENTS) - {FILE_CLIENT}
    every = [name for adapter in ADAPTERS for name in adapter.names]
    assert len(every) == len(set(every)), "a name or alias names two clients"
    for adapter in ADAPTERS:
        assert re.fullmatch(r"[a-z][a-z-]*", adapter.alias), adapter.alias
        assert adapter.label and adapter.label != adapter.name
        assert named(adapter.name) is adapter is named(adapter.alias)
    # `hook --client` and `install` take either name of a client that has hooks.
    assert {n: a for a in ADAPTERS if a.hooks for n in a.names} == CLIENTS
    assert DEFAULT_CLIENT in CLIENTS


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.name)
def test_a_client_with_hooks_is_installed_and_one_without_is_not(adapter: Adapter) -> None:
    assert (adapter.install is not None) == bool(adapter.hooks)
    hooks = {spec.hook for spec in adapter.hooks}
    assert adapter.context_hooks <= hooks
    for hook in hooks:  # each hook's input read (none given: nothing to do) and answered
        assert list(adapter.events(hook, {})) is not None
        adapter.render(hook, Answer(context="c"))
        adapter.render(hook, Answer(reminder="r"))


@pytest.mark.parametrize("adapter", [a for a in ADAPTERS if a.install], ids=lambda a: a.name)
@pytest.mark.parametrize("where", ["user", "project"])
def test_install_writes_every_hook_the_adapter_declares_and_the_bridge(
    adapter: Adapter, where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    for variable in ("CODEX_HOME", "COPILOT_HOME", "AGENT_MEMORY_CODEX"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no Codex to ask for its trust
    given = str(project) if where == "project" else None
    before = sorted(p for p in tmp_path.rglob("*") if p.is_file())

    install(adapter.alias, project=given)
    written = [p for p in tmp_path.rglob("*") if p.is_file() and "state" not in p.parts]
    text = "\n".join(p.read_text() for p in written)
    commands = re.findall(r'"(?:command|bash)": "([^"]*)"', text)
    ours = [json.loads(f'"{c}"') for c in commands if is_ours(json.loads(f'"{c}"'))]
    assert sorted(c.rsplit(" ", 1)[1] for c in ours) == sorted(s.hook for s in adapter.hooks)
    if adapter.name != DEFAULT_CLIENT:
        assert all(f" hook --client {adapter.alias} " in c for c in ours)
    servers = [
        server
        for path in written
        if path.suffix == ".json"
        for server in (json.loads(path.read_text()).get("mcpServers") or {}).values()
    ]
    assert any(runs_our_bridge(s) for s in servers) or '"mcp", "--tools", "agent"' in text

    uninstall(adapter.name, project=given)
    after = sorted(p for p in tmp_path.rglob("*") if p.is_file() and "state" not in p.parts)
    assert after == before


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.name)
def test_each_reader_is_the_clients_and_finds_its_sessions_in_its_home(adapter: Adapter) -> None:
    reader = adapter.reading()
    assert adapter.name == reader.CLIENT
    assert callable(reader.read) and callable(reader.recognises)
    assert formats.reader_of(adapter.name) is reader.read is formats.reader_of(adapter.alias)
    assert reader.recognises("") == 0  # an empty file is nobody's
    if adapter.home is not None:  # import-history looks there
        assert isinstance(adapter.home.default(), Path)
        assert reader.transcript_files(Path("/nonexistent")) == []
        for rules in adapter.home.rules:
            assert rules.source and rules.patterns


def test_the_commands_take_each_clients_folder_and_distiller_from_the_registry() -> None:
    import argparse

    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers()

    def command(
        name: str, _: str, parents: list[argparse.ArgumentParser]
    ) -> argparse.ArgumentParser:
        return commands.add_parser(name, add_help=False)

    class Parents:
        client = shown = argparse.ArgumentParser(add_help=False)

    history.register(command, Parents())  # type: ignore[arg-type]
    files.register(command, Parents())  # type: ignore[arg-type]
    homed = [a for a in ADAPTERS if a.home is not None]
    ruled = [a for a in homed if a.home and a.home.rules]
    args = parser.parse_args(["import-history", *(f"{a.home_option}=/x/{a.alias}" for a in homed)])
    assert [history.home_of(args, a) for a in homed] == [Path(f"/x/{a.alias}") for a in homed]
    args = parser.parse_args(["import-files", *(f"{a.home_option}=/x/{a.alias}" for a in ruled)])
    assert files.homes_of(args) == {a.name: Path(f"/x/{a.alias}") for a in ruled}
    parser.parse_args(["onboard", *(f"{a.home_option}=/x" for a in homed)])
    assert parser.parse_args(["import-history", "--distill", "gemini-cli"]).distill == "gemini-cli"


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.name)
def test_a_distiller_builds_its_headless_command(adapter: Adapter, tmp_path: Path) -> None:
    if adapter.distiller is None:
        assert adapter.name not in distillers()
        return
    assert distillers()[adapter.name] is adapter
    assert adapter.distiller.override.startswith("AGENT_MEMORY_")
    env = {"HOME": str(tmp_path)}
    call = adapter.distiller.headless(adapter.distiller.program, tmp_path, tmp_path, env)
    assert isinstance(call, Headless) and call.argv[0] == adapter.distiller.program
    done = subprocess.CompletedProcess(call.argv, 1, "", "")
    with pytest.raises(CallFailed):  # a failed run is said, never read as an answer
        call.answer(done)


def test_import_files_reads_the_rules_each_adapter_declares(tmp_path: Path) -> None:
    """A repository's files of each client's rules, its own folder's, and those it keeps
    for the checkout there, all read by their adapter's word."""
    from agent_memory_client.rule_files.where import project_files, user_files

    top, homes = tmp_path / "repo", {}
    expected = set()
    for adapter in ADAPTERS:
        for rules in adapter.repository_rules:
            name = next(p for p in rules.patterns if "*" not in p)
            (top / rules.under / name).parent.mkdir(parents=True, exist_ok=True)
            (top / rules.under / name).write_text("- Run `make test` before pushing.\n")
            expected.add((rules.source, (Path(rules.under) / name).as_posix()))
        if adapter.home is None:
            continue
        homes[adapter.name] = home = tmp_path / adapter.alias
        for own in adapter.home.rules:
            pattern = own.patterns[0].replace("*", "x")
            (home / own.under / pattern).parent.mkdir(parents=True, exist_ok=True)
            (home / own.under / pattern).write_text("- Answer in British English.\n")
            expected.add((own.source, str(home / own.under / pattern)))
        for kept in adapter.home.checkout_rules:
            for folder in kept.folders(home, top.resolve()):
                folder.mkdir(parents=True, exist_ok=True)
                (folder / "MEMORY.md").write_text("- The pool test is flaky.\n")
                expected.add((kept.source, str(folder / "MEMORY.md")))
    found = [*project_files(top, homes), *user_files(homes)]
    read = {(f.source, f.path.relative_to(top).as_posix()) for f in found if top in f.path.parents}
    read |= {(f.source, str(f.path)) for f in found if top not in f.path.parents}
    assert read == expected
