"""A git work tree a test's agent works in."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def checkout(path: Path) -> Path:
    """A git work tree with an origin (acme/api) and one commit of app/db/pool.py."""
    (path / "app" / "db").mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "t@example.org")
    git(path, "config", "user.name", "t")
    git(path, "remote", "add", "origin", "git@github.com:acme/api.git")
    (path / "app" / "db" / "pool.py").write_text("EF_SEARCH = 100\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "pool")
    return path
