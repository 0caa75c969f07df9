"""An episode edited in place, the way ``sed -i`` and most editors save (a new file
renamed over the old, which moves the folder's mtime), is seen by the next refresh, not
only by ``index --rebuild`` (issue 28, point 7); put back, it is committed text again."""

from __future__ import annotations

import json
import os
from typing import Any

from conftest import git

from scarwarden.repo import MemoryRepo

EP = "ep-hkgnqdz88f"
OLD = "Draft a LinkedIn post announcing the Loop Inbox beta"


def _save_by_rename(path: Any, text: str) -> None:
    tmp = path.with_name(path.name + ".swp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _task(cli: Any) -> str:
    listed = json.loads(cli("episode", "list", "--json").stdout)
    return next(e["task"] for e in listed if e["id"] == EP)


def test_an_edit_in_place_is_seen_and_marks_the_ledger_uncommitted(cli: Any, demo_repo: MemoryRepo) -> None:
    assert _task(cli) == OLD  # the index is built
    path = next(demo_repo.episodes_dir.rglob(f"{EP}.yaml"))
    _save_by_rename(path, path.read_text().replace(OLD, "Draft the beta post, edited by hand"))
    assert "task: Draft the beta post, edited by hand" in cli("episode", "show", EP).stdout
    assert _task(cli) == "Draft the beta post, edited by hand"
    receipt = json.loads(cli("recall", "--json", "Draft a LinkedIn post").stdout)["receipt"]
    assert receipt["ledger"].endswith("+uncommitted")
    # Put back as committed: the committed text, and the ledger is clean again.
    git(demo_repo.root, "checkout", "-q", "--", str(path))
    assert _task(cli) == OLD
    receipt = json.loads(cli("recall", "--json", "Draft a LinkedIn post").stdout)["receipt"]
    assert not receipt["ledger"].endswith("+uncommitted")


def test_an_edit_committed_by_hand_is_seen_at_once(cli: Any, demo_repo: MemoryRepo) -> None:
    assert _task(cli) == OLD
    path = next(demo_repo.episodes_dir.rglob(f"{EP}.yaml"))
    _save_by_rename(path, path.read_text().replace(OLD, "Edited and committed"))
    git(demo_repo.root, "commit", "-qam", "edit by hand", "--no-verify")
    assert _task(cli) == "Edited and committed"
    receipt = json.loads(cli("recall", "--json", "Draft a LinkedIn post").stdout)["receipt"]
    assert not receipt["ledger"].endswith("+uncommitted")


def test_a_new_episode_asks_git_nothing_about_its_folder(
    cli: Any, demo_repo: MemoryRepo, tmp_path: Any, monkeypatch: Any
) -> None:
    """A committed new episode moves its folder's mtime and nothing else there changed:
    the refresh asks no ``git ls-files -m`` (issue 30: at 1M episodes it read git's whole
    index and stat'ed the month's 28,000 files ~11 times each, 1.2-4 s). An edit saved
    by rename in that folder afterwards is still seen."""
    from scarwarden.files.record import add_episodes
    from scarwarden.index import open_index

    assert _task(cli) == OLD  # the index is built
    [new] = add_episodes(
        demo_repo, [{"task": "Post the recap", "outcome": "Fine", "at": "2026-08-20T10:00:00Z"}]
    )
    path = next(demo_repo.episodes_dir.rglob(f"{EP}.yaml"))
    assert path.parent == next(demo_repo.episodes_dir.rglob(f"{new.id}.yaml")).parent
    trace = tmp_path / "trace"
    monkeypatch.setenv("GIT_TRACE", str(trace))
    with open_index(demo_repo) as index:
        assert index.get_episode(new.id) is not None
    assert "ls-files" not in trace.read_text()
    monkeypatch.delenv("GIT_TRACE")
    _save_by_rename(path, path.read_text().replace(OLD, "Edited after the new one"))
    assert _task(cli) == "Edited after the new one"


def test_an_edit_and_a_new_episode_in_one_folder_are_both_seen(cli: Any, demo_repo: MemoryRepo) -> None:
    """The file saved by rename has a new inode: found among the folder's files though
    the folder also moved for a new episode (no whole-folder question to git)."""
    from scarwarden.files.record import add_episodes

    assert _task(cli) == OLD
    path = next(demo_repo.episodes_dir.rglob(f"{EP}.yaml"))
    _save_by_rename(path, path.read_text().replace(OLD, "Edited beside a new one"))
    [new] = add_episodes(
        demo_repo, [{"task": "Post the recap", "outcome": "Fine", "at": "2026-08-21T10:00:00Z"}]
    )
    assert _task(cli) == "Edited beside a new one"
    listed = json.loads(cli("episode", "list", "--json").stdout)
    assert new.id in [e["id"] for e in listed]
    receipt = json.loads(cli("recall", "--json", "Draft a LinkedIn post").stdout)["receipt"]
    assert receipt["ledger"].endswith("+uncommitted")
