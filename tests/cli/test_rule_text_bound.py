"""A rule's text and title are at most 20,000 characters each, as a recall task is: a
longer one (``rule add --text`` with 5 MB) is refused, exit 2, nothing written."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import Cli, git

from scarwarden.repo import MemoryRepo

CITED = "ep-hkgnqdz88f"  # an episode of the demo ledger


def _state(repo: MemoryRepo) -> tuple[str, str, bytes]:
    status = git(repo.root, "status", "--porcelain").stdout
    return git(repo.root, "rev-parse", "HEAD").stdout, status, repo.playbook_path.read_bytes()


def test_a_5_mb_rule_text_is_refused_and_nothing_written(cli: Cli, demo_repo: MemoryRepo) -> None:
    before = _state(demo_repo)
    for args in (
        ["--text", "Test twice. " * 440_000],
        ["--text", "x" * 20_001],
        ["--text", "Test twice.", "--title", "t" * 20_001],
    ):
        result = cli("rule", "add", *args, "--cites", CITED)
        assert result.exit_code == 2, result.output[-300:]
        which = "title" if "--title" in args else "text"
        chars = len(args[-1].strip())
        assert f"the rule's {which} is {chars:,} characters; the limit is 20,000" in result.stderr
        assert "nothing was written" in result.stderr and "Traceback" not in result.output
        assert _state(demo_repo) == before


def test_the_bound_through_a_real_process(demo_repo: MemoryRepo) -> None:
    before = _state(demo_repo)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    command = [sys.executable, "-m", "scarwarden", "rule", "add", "--cites", CITED, "--text"]
    run = {"cwd": demo_repo.root, "capture_output": True, "text": True, "env": env}
    refused = subprocess.run([*command, "y" * 100_000], **run)
    assert refused.returncode == 2 and "the limit is 20,000" in refused.stderr, refused.stderr[-300:]
    assert _state(demo_repo) == before
    kept = subprocess.run([*command, "z" * 20_000], **run)
    assert kept.returncode == 0, kept.stderr[-300:]  # the bound itself is allowed
