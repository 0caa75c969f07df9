"""Long commands draw a bar on a terminal and stay quiet in pipes and with --json (issue 18):
``index --rebuild``, ``check --all``, ``verify`` and ``distill``'s model batches."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import git
from fakellm import FakeLLM, reply_json
from terminal import run_on_terminal

from scarwarden.distill import distill
from scarwarden.files.record import add_episodes
from scarwarden.gate.check import check_all
from scarwarden.gate.history_check import verify_history
from scarwarden.index import rebuild
from scarwarden.repo import MemoryRepo, open_repo

Calls = list[tuple[int, int]]
LABELS = ("indexing episodes", "checking episodes", "verifying history", "distilling episodes")


def recorder() -> tuple[Calls, Any]:
    calls: Calls = []
    return calls, lambda done, total: calls.append((done, total))


def forwards_to_full(calls: Calls, total: int) -> None:
    assert calls, "the callback was never called"
    assert calls[-1] == (total, total)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)  # never backwards


def episode_count(repo: MemoryRepo) -> int:
    return len(list(repo.episodes_dir.rglob("*.yaml")))


def test_library_parts_report_their_work(demo_repo: MemoryRepo) -> None:
    episodes = episode_count(demo_repo)
    calls, progress = recorder()
    stats = rebuild(demo_repo, progress=progress)
    forwards_to_full(calls, stats.episodes_added)
    assert stats.episodes_added == episodes

    calls, progress = recorder()
    report = check_all(demo_repo, progress=progress)
    forwards_to_full(calls, episodes)
    assert report.stats["episodes_checked"] == episodes

    calls, progress = recorder()
    result = verify_history(demo_repo, progress=progress)
    forwards_to_full(calls, result.episodes + result.commits)  # the episodes, then each commit

    git(demo_repo.root, "branch", "side")
    calls, progress = recorder()
    verify_history(demo_repo, all_refs=True, progress=progress)
    assert calls == [(1, 2), (2, 2)]  # each ref is a walk of its own: the bar counts refs


def test_distill_counts_the_episodes_each_batch_answered(
    git_repo: Path, llm: FakeLLM, caplog: pytest.LogCaptureFixture
) -> None:
    from scarwarden.config import ModelSettings
    from scarwarden.files.scaffold import init
    from scarwarden.llm.client import ChatClient

    init(open_repo(git_repo, initialised=False), demo=True)
    (git_repo / "scarwarden.yaml").write_text("distill:\n  token_budget: 1500\n")
    repo = open_repo(git_repo)
    add_episodes(
        repo,
        [
            {"task": f"Webinar reminder {i}", "correction": "UTC first. " * 20, "source": "correction"}
            for i in range(6)
        ],
    )
    llm.default = lambda body: reply_json({"operations": []})
    client = ChatClient(ModelSettings(base_url=llm.url, distill_model="m", backoff=0.01), "sk-test")
    calls, progress = recorder()
    result = distill(repo, client=client, dry_run=True, progress=progress)
    total = len(result.new)
    assert len(result.batches) > 1
    forwards_to_full(calls, total)
    assert calls[0] == (0, total)  # drawn before the first reply: waiting is the long part
    assert len(calls) == len(result.batches) + 1
    # The bar replaces the line per batch a pipe gets (a line would break the bar's).
    caplog.set_level("INFO", logger="scarwarden")
    distill(repo, client=client, dry_run=True, progress=progress)
    assert "distill batch" not in caplog.text
    distill(repo, client=client, dry_run=True)
    assert "distill batch 1 of" in caplog.text


def scarwarden(repo: MemoryRepo, *args: str) -> tuple[int, str]:
    """The real command on a pseudo-terminal (stdin, stdout and stderr are all the pty)."""
    argv = [sys.executable, "-m", "scarwarden", "-C", str(repo.root), *args]
    code, text, _ = run_on_terminal(argv, prompt=b"\0never", answer=b"")
    return code, text


@pytest.mark.parametrize(
    ("args", "label"),
    [
        (("index", "--rebuild"), "indexing episodes"),
        (("check", "--all"), "checking episodes"),
        (("verify",), "verifying history"),
    ],
)
def test_a_bar_on_a_terminal(demo_repo: MemoryRepo, args: tuple[str, ...], label: str) -> None:
    code, text = scarwarden(demo_repo, *args)
    assert code == 0, text
    assert re.search(rf"{label}\s+\[#+\]\s+100%", text), text


def test_no_bar_with_json_even_on_a_terminal(demo_repo: MemoryRepo) -> None:
    code, text = scarwarden(demo_repo, "check", "--all", "--json")
    assert code == 0, text
    assert "checking episodes" not in text and "\r\n" in text  # the pty turns \n into \r\n
    assert json.loads(text.replace("\r\n", "\n"))["ok"] is True


@pytest.mark.parametrize(
    "args",
    [("index", "--rebuild"), ("check", "--all"), ("verify",), ("distill", "--dry-run", "--offline")],
)
def test_nothing_in_a_pipe(cli: Any, args: tuple[str, ...]) -> None:
    result = cli(*args)
    assert result.exit_code == 0, result.output
    assert "\r" not in result.output and not any(label in result.output for label in LABELS)


def test_distill_draws_its_batches_on_a_terminal(demo_repo: MemoryRepo, fake_llm: FakeLLM) -> None:
    fake_llm.default = lambda body: reply_json({"operations": []})
    code, text = scarwarden(demo_repo, "distill", "--dry-run")
    assert code == 0, text
    assert re.search(r"distilling episodes\s+\[#+\]\s+100%", text), text
    assert fake_llm.requests  # the model was asked: the bar followed real batches
