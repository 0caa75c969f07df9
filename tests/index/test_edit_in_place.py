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
