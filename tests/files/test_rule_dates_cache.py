"""When each rule last changed, kept for the next process (``.scarwarden/rule-dates.json``,
issue 30 point 3): a cold recall of an applied rule reads one small file instead of
walking every version of the playbook, and never a stale answer."""

from __future__ import annotations

import json

from conftest import git, head

from scarwarden.files import rule_dates
from scarwarden.files.rule_dates import last_changes, last_changes_at
from scarwarden.repo import MemoryRepo


def _walked(repo: MemoryRepo) -> dict[str, rule_dates.RuleChange]:
    """What the gate's walk gives at HEAD (never from the file)."""
    blob = git(repo.root, "rev-parse", f"HEAD:{repo.playbook_rel}").stdout.strip()
    found = last_changes_at(repo.root, "HEAD", repo.playbook_rel, blob)
    assert found is not None
    return found


def test_the_walk_is_kept_for_the_next_process_and_read_back(demo_repo: MemoryRepo) -> None:
    repo = demo_repo
    repo.state_dir.mkdir(exist_ok=True)
    path = repo.state_dir / rule_dates.CACHE_NAME
    path.unlink(missing_ok=True)
    first = last_changes(repo)
    assert first == _walked(repo) and first
    kept = json.loads(path.read_text())
    assert kept["key"]["commit"] == head(repo) and kept["key"]["playbook"] == repo.playbook_rel
    assert kept["changes"]["PB-07"] == [first["PB-07"].commit, first["PB-07"].date]
    # The next process reads the file: what it says for this commit is what comes back.
    kept["changes"]["PB-07"] = ["0" * 40, "2001-01-01T00:00:00+00:00"]
    path.write_text(json.dumps(kept))
    assert last_changes(repo)["PB-07"] == rule_dates.RuleChange("0" * 40, "2001-01-01T00:00:00+00:00")


def test_a_new_commit_or_a_damaged_file_walks_again(demo_repo: MemoryRepo) -> None:
    repo = demo_repo
    repo.state_dir.mkdir(exist_ok=True)
    path = repo.state_dir / rule_dates.CACHE_NAME
    before = last_changes(repo)
    playbook = repo.playbook_path
    playbook.write_text(playbook.read_text().replace("under 50 characters", "under 45 characters"))
    git(repo.root, "commit", "-q", "-am", "Tighten PB-07")
    after = last_changes(repo)
    assert after["PB-07"].commit == head(repo) != before["PB-07"].commit
    assert after["PB-01"] == before["PB-01"]
    assert json.loads(path.read_text())["key"]["commit"] == head(repo)
    for damage in ("{not json", '{"key": 3}', '{"key": null, "changes": []}', ""):
        path.write_text(damage)
        assert last_changes(repo) == _walked(repo) == after
    path.unlink()
    path.mkdir()  # cannot be written: the answer is still right, nothing raised
    assert last_changes(repo) == after
