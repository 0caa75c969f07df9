"""An answer typed at ask's prompt that then cannot be recorded is not lost with the
command: it is printed back with the command that records it once the cause is fixed."""

from __future__ import annotations

import os
import sys

from conftest import git, head
from terminal import run_on_terminal

from scarwarden.repo import MemoryRepo

QUITO = "Book a flight to Quito"


def test_an_answer_typed_without_a_git_identity_is_printed_back(
    demo_repo: MemoryRepo, tmp_path, monkeypatch
) -> None:
    """With no git identity the prompt asked, the human typed, and the commit failed
    ("git does not know who is committing", exit 2): the typed answer was gone."""
    home = tmp_path / "home"
    home.mkdir()
    for name in [k for k in os.environ if k.startswith(("GIT_AUTHOR", "GIT_COMMITTER"))]:
        monkeypatch.delenv(name)
    for name, value in (("HOME", home), ("GIT_CONFIG_GLOBAL", home / "none"), ("GIT_CONFIG_NOSYSTEM", "1")):
        monkeypatch.setenv(name, str(value))
    git(demo_repo.root, "config", "--unset", "user.name", check=False)
    git(demo_repo.root, "config", "--unset", "user.email", check=False)
    before = head(demo_repo)
    for command, prompt in (("ask", b"What should the agent do?"), ("answer", b"Your answer")):
        code, text, answered = run_on_terminal(
            [sys.executable, "-m", "scarwarden", "-C", str(demo_repo.root), command, QUITO],
            prompt,
            b"Use the travel portal; economy\n",
            timeout=30,
        )
        assert answered, text
        assert code == 2, text
        assert "git does not know who is committing" in text
        assert "The answer typed was not recorded" in text
        assert f"scarwarden {command} \"{QUITO}\" --answer 'Use the travel portal; economy'" in text
        assert head(demo_repo) == before
