"""Which repository a session, the CLI and the bridge file memories under."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agent_memory_client.git import (
    changed_files,
    git_state,
    history,
    normalise_remote,
    repository_name,
)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("git@github.com:acme/api.git", ("github.com", "acme/api")),
        ("git@github.com:acme/api", ("github.com", "acme/api")),
        ("https://github.com/acme/api.git", ("github.com", "acme/api")),
        ("https://github.com/acme/api", ("github.com", "acme/api")),
        ("https://u:t@gitlab.example.com/group/sub/api.git",
         ("gitlab.example.com", "group/sub/api")),
        ("ssh://git@git.example.org:2222/acme/api.git", ("git.example.org", "acme/api")),
        ("http://Git.Example.Org/acme/api/", ("git.example.org", "acme/api")),
        ("/srv/git/api.git", None),
        ("../api", None),
        ("git@github.com:api.git", None),
    ],
)  # fmt: skip
def test_remote_forms(url: str, expected: tuple[str, str] | None) -> None:
    assert normalise_remote(url) == expected


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture
def work_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("AGENT_MEMORY_REPO", raising=False)
    tree = tmp_path / "api-checkout"
    tree.mkdir()
    git(tree, "init", "-q", "-b", "main")
    git(tree, "config", "user.email", "t@example.org")
    git(tree, "config", "user.name", "t")
    return tree


def commit(tree: Path, name: str, text: str) -> str:
    (tree / name).parent.mkdir(parents=True, exist_ok=True)
    (tree / name).write_text(text)
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "-m", f"change {name}")
    return git(tree, "rev-parse", "HEAD")


def test_origin_names_the_repository(work_tree: Path) -> None:
    git(work_tree, "remote", "add", "origin", "git@github.com:acme/api.git")
    assert repository_name(work_tree) == "acme/api"
    assert repository_name(work_tree / ".") == "acme/api"
    # Another remote with the same owner/name on another host: the host tells them apart.
    git(work_tree, "remote", "add", "mirror", "https://gitlab.example.com/acme/api.git")
    assert repository_name(work_tree) == "github.com/acme/api"


def test_no_remote_takes_the_top_level_name(work_tree: Path) -> None:
    (work_tree / "src").mkdir()
    assert repository_name(work_tree / "src") == "api-checkout"


def test_the_setting_wins(work_tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_MEMORY_REPO", "team/monorepo")
    assert repository_name(work_tree) == "team/monorepo"


def test_no_git_and_a_bare_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENT_MEMORY_REPO", raising=False)
    plain = tmp_path / "notes"
    plain.mkdir()
    # Outside git: the working directory's own name (the README's rule), no commit.
    assert repository_name(plain) == "notes"
    assert git_state(plain).commit is None
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    assert git_state(bare).commit is None and git_state(bare).branch is None


def test_head_branch_and_changes(work_tree: Path) -> None:
    empty = git_state(work_tree)
    assert empty.commit is None and empty.repository == "api-checkout"
    first = commit(work_tree, "app/db/pool.py", "one")
    second = commit(work_tree, "README.md", "two")
    third = commit(work_tree, "app/db/pool.py", "three")
    state = git_state(work_tree)
    assert (state.commit, state.branch) == (third, "main")
    assert changed_files(work_tree, first, third) == ["README.md", "app/db/pool.py"]
    assert changed_files(work_tree, second, third) == ["app/db/pool.py"]
    assert changed_files(work_tree, "0" * 40, third) is None  # an unknown commit
    # The history since a commit, newest first, with each commit's files.
    assert history(work_tree, first, third) == [
        {"commit": third, "files": ["app/db/pool.py"]},
        {"commit": second, "files": ["README.md"]},
    ]
    assert history(work_tree, "0" * 40, third) is None
    git(work_tree, "checkout", "-q", "--detach", second)
    detached = git_state(work_tree)
    assert (detached.commit, detached.branch) == (second, None)
