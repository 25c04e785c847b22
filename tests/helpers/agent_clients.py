"""The real agent CLIs a test drives (Claude Code from scripts/claude-code; Codex, Gemini CLI
and GitHub Copilot CLI from scripts/agent-clients), each in a home of its own against a stub
of its model's API (tests/helpers/model_stubs.py), and what recall opens with in a model's
request."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "integrations" / "claude-code"
RECALLED = "Memories that may bear on this"

CLAUDE = (
    Path(
        os.environ.get("AGENT_MEMORY_CLAUDE_DIR") or Path.home() / ".cache/agent-memory/claude-code"
    )
    / "node_modules"
    / ".bin"
    / "claude"
)
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "agent-memory"
CODEX = CACHE / "codex" / "node_modules" / ".bin" / "codex"
GEMINI = CACHE / "gemini" / "node_modules" / ".bin" / "gemini"
COPILOT = CACHE / "copilot" / "node_modules" / ".bin" / "copilot"


async def claude_run(
    repo: Path,
    home: Path,
    model_url: str,
    served: str,
    *allowed: str,
    prompt: str = "Look at this repository",
    settings: Mapping[str, str] | None = None,
) -> str:
    """One `claude -p` run with the plugin; `allowed`: the tools it may call unasked;
    `settings`: Claude Code's own environment variables."""
    tools = ["--allowedTools", ",".join(allowed)]
    process = await asyncio.create_subprocess_exec(
        str(CLAUDE), "-p", prompt, "--plugin-dir", str(PLUGIN),
        *(tools if allowed else []),
        cwd=repo,
        env={
            "PATH": os.environ["PATH"], "HOME": str(home), "XDG_CACHE_HOME": str(home / "cache"),
            "ANTHROPIC_BASE_URL": model_url, "ANTHROPIC_API_KEY": "stub",
            "AGENT_MEMORY_URL": served, "DISABLE_AUTOUPDATER": "1",
            "AGENT_MEMORY_CLIENT": str(Path(sys.executable).parent / "agent-memory-client"),
            **(settings or {}),
        },
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        out, err = await asyncio.wait_for(process.communicate(), 120)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise AssertionError("claude -p did not end within 120 s") from None
    assert process.returncode == 0, err.decode()
    return out.decode()


def client_env(home: Path, served: str, **extra: str) -> dict[str, str]:
    """The client's environment: a home of its own, and this interpreter's scripts first on
    PATH (the extension's hooks run `agent-memory-client` from there)."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    return {
        "PATH": path, "HOME": str(home), "XDG_CACHE_HOME": str(home / "cache"),
        "XDG_STATE_HOME": str(home / "state"), "AGENT_MEMORY_URL": served, **extra,
    }  # fmt: skip


def install(client: str, env: dict[str, str], *where: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "agent_memory_client", "install", client, *where],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout


async def run(command: list[str], cwd: Path, env: dict[str, str]) -> str:
    process = await asyncio.create_subprocess_exec(
        *command, cwd=cwd, env=env, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        out, err = await asyncio.wait_for(process.communicate(), 150)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise AssertionError(f"{command[0]} did not end within 150 s") from None
    assert process.returncode == 0, err.decode()[-3000:]
    return out.decode()


async def codex_run(repo: Path, home: Path, model_url: str, served: str, prompt: str) -> str:
    env = client_env(home, served, STUB_KEY="stub", CODEX_HOME=str(home / ".codex"))
    command = [str(CODEX), "exec", "--dangerously-bypass-approvals-and-sandbox", prompt]
    return await run(command, repo, env)


def codex_home(home: Path, model_url: str, served: str) -> str:
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text(
        'model = "stub-model"\nmodel_provider = "stub"\n\n[model_providers.stub]\n'
        f'name = "stub"\nbase_url = "{model_url}/v1"\nwire_api = "responses"\n'
        'env_key = "STUB_KEY"\n'
    )
    env = client_env(home, served, CODEX_HOME=str(home / ".codex"), AGENT_MEMORY_CODEX=str(CODEX))
    return install("codex", env)


async def gemini_run(repo: Path, home: Path, model_url: str, served: str, prompt: str) -> str:
    env = client_env(
        home, served, GEMINI_API_KEY="stub", GOOGLE_GEMINI_BASE_URL=model_url,
        GEMINI_CLI_TRUST_WORKSPACE="true",
    )  # fmt: skip
    command = [str(GEMINI), "-m", "gemini-2.5-flash", "--yolo", "-p", prompt]
    return await run(command, repo, env)


def gemini_home(home: Path, model_url: str, served: str) -> str:
    (home / ".gemini").mkdir(parents=True)
    settings = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    return install("gemini", client_env(home, served))


async def copilot_run(
    repo: Path, home: Path, model_url: str, served: str, prompt: str, *flags: str
) -> str:
    """Copilot CLI offline against the stub (its BYOK provider: no GitHub login), the
    user-level hooks and MCP server install wrote (a repository's need a trusted folder)."""
    env = client_env(
        home, served, COPILOT_OFFLINE="true", COPILOT_PROVIDER_BASE_URL=f"{model_url}/v1",
        COPILOT_PROVIDER_API_KEY="stub", COPILOT_MODEL="gpt-4.1", COPILOT_AUTO_UPDATE="false",
        COPILOT_PKG_CACHE_HOME=str(CACHE / "copilot"),  # where scripts/agent-clients unpacked it
    )  # fmt: skip
    command = [str(COPILOT), "-p", prompt, "--allow-all-tools", "--no-ask-user", *flags]
    return await run(command, repo, env)


def copilot_home(home: Path, model_url: str, served: str) -> str:
    home.mkdir(parents=True)
    return install("copilot", client_env(home, served))
