"""The failed-episode candidates proved month by month (issues 26 and 30): each month
folder's words are kept by (folder, month tree), a commit re-reads only the files it
changed, and the gate still shows exactly the engine's candidates: duplicate IDs across
months (the first file in path order counts), invalid files, a month folder moved
elsewhere (same tree, other folder: its episodes no longer valid), and an entry forged
with its checksum recomputed (trusted, as the statistics are; with
SCARWARDEN_LEDGER_CACHE=off the gate derives every month from its files)."""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

from conftest import git
from test_receipt_candidates import _prove
from test_receipts_v2 import issued, stage

from scarwarden.config import RecallSettings
from scarwarden.files.episodes import Episode
from scarwarden.gate.candidates_months import MonthCache, MonthWords, month_trees
from scarwarden.gate.check import check_staged
from scarwarden.gate.ledger_files import cache_dir
from scarwarden.gate.proofs_candidates import LedgerEpisodes
from scarwarden.repo import MemoryRepo

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "recall"))
from test_nearest import APART, _agree  # noqa: E402


def _write(repo: MemoryRepo, data: dict[str, Any]) -> str:
    path = repo.root / Episode(data).relpath(repo.episodes_rel)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(Episode(data).render())
    return str(path.relative_to(repo.root))


def _months_memory(repo: MemoryRepo, seed: int, count: int = 120) -> list[str]:
    """Episodes over six months, some corrected; five IDs also valid in a later month
    (another task), one invalid file; returns tasks made of their words."""
    rng = random.Random(seed)
    for i in range(count):
        data = {
            "id": f"ep-month{seed}{i:04d}",
            "at": f"2026-0{1 + i % 6}-{1 + i % 28:02d}T10:00:00Z",
            "task": " ".join(rng.choices(APART, k=rng.randint(1, 4))),
            "action": "done",
        }
        if rng.random() < 0.6:
            data["correction"] = " ".join(rng.choices(APART, k=5))
        _write(repo, data)
    for i in range(5):  # the same ID again, later: the index keeps the first in path order
        task = " ".join(rng.choices(APART, k=4))
        _write(
            repo,
            {
                "id": f"ep-month{seed}{i:04d}",
                "at": "2026-08-02T10:00:00Z",
                "task": task,
                "action": "again",
                "correction": "the later copy",
            },
        )
    broken = repo.root / repo.episodes_rel / "2026" / "03" / "ep-broken0001.yaml"
    broken.write_text("id: [not an episode\n")
    git(repo.root, "add", "-A", repo.memory_rel)
    git(repo.root, "commit", "-q", "--no-verify", "-m", "six months")
    return [" ".join(rng.choices(APART, k=rng.randint(1, 3))) for _ in range(25)]


def _tree(repo: MemoryRepo) -> str:
    return git(repo.root, "rev-parse", f"HEAD:{repo.episodes_rel}").stdout.strip()


def test_the_gate_shows_the_engines_episode_candidates_across_months(memory_repo: MemoryRepo) -> None:
    tasks = _months_memory(memory_repo, 3)
    _rules, episodes = _agree(memory_repo, tasks, RecallSettings())
    assert episodes >= 30
    assert [m for m, _t in month_trees(memory_repo.root, _tree(memory_repo))] == [
        "2026/01",
        "2026/02",
        "2026/03",
        "2026/04",
        "2026/05",
        "2026/06",
        "2026/08",
    ]


def test_a_commit_re_reads_only_the_files_it_changed(memory_repo: MemoryRepo) -> None:
    tasks = _months_memory(memory_repo, 4)
    _agree(memory_repo, tasks, RecallSettings())  # keeps every month's words
    folder = memory_repo.root / memory_repo.episodes_rel / "2026"
    _write(
        memory_repo,
        {
            "id": "ep-added00001",
            "at": "2026-03-09T10:00:00Z",
            "task": "zorbel quindar",
            "action": "new",
            "correction": "a fix",
        },
    )
    next(folder.glob("05/*.yaml")).unlink()
    edited = sorted(folder.glob("01/*.yaml"))[0]
    edited.write_text(edited.read_text().replace("action: done", "action: done twice"))
    git(memory_repo.root, "add", "-A", memory_repo.memory_rel)
    git(memory_repo.root, "commit", "-q", "--no-verify", "-m", "three months change")
    reader = LedgerEpisodes(memory_repo.root, memory_repo.episodes_rel)
    reader._of(_tree(memory_repo))
    assert reader.read_files == 2 and reader.months_read == 4  # added + edited; 4 months untouched
    _agree(memory_repo, tasks, RecallSettings())


def test_a_month_folder_moved_elsewhere_is_not_its_old_entry(memory_repo: MemoryRepo) -> None:
    """The same month tree under another folder: its episodes are no longer valid there,
    so an entry kept by tree ID alone would show them; kept by folder and tree, none is."""
    for i in range(4):
        _write(
            memory_repo,
            {
                "id": f"ep-valid{i:05d}",
                "at": "2026-01-05T10:00:00Z",
                "task": "zorbel",
                "action": "a",
                "correction": "kept",
            },
        )
        _write(
            memory_repo,
            {
                "id": f"ep-moved{i:05d}",
                "at": "2026-02-05T10:00:00Z",
                "task": "zorbel quindar plimsy",
                "action": "b",
                "correction": "moved",
            },
        )
    git(memory_repo.root, "add", "-A", memory_repo.memory_rel)
    git(memory_repo.root, "commit", "-q", "--no-verify", "-m", "two months")
    r = issued(memory_repo, "zorbel quindar plimsy")
    assert r["candidates"][0].startswith("ep-moved")
    assert _prove(memory_repo, r)[1] == "proved"  # keeps 2026/02's words
    git(memory_repo.root, "mv", f"{memory_repo.episodes_rel}/2026/02", f"{memory_repo.episodes_rel}/2026/09")
    git(memory_repo.root, "commit", "-q", "--no-verify", "-m", "moved")
    r = issued(memory_repo, "zorbel quindar plimsy")
    assert r["candidates"] and all(c.startswith("ep-valid") for c in r["candidates"])
    prover, status = _prove(memory_repo, r)
    assert status == "proved" and prover.episodes.read_files == 4  # 2026/09 read from its files


def test_an_entry_forged_with_its_checksum_is_trusted_and_cache_off_is_not(
    memory_repo: MemoryRepo, monkeypatch: Any
) -> None:
    """The chain of trust (docs/receipts.md): an entry is checked for damage, not for a
    forger who can write .git (who could rewrite the hooks too); with the cache off the
    gate derives every month from its files, so the honest receipt proves again."""
    tasks = _months_memory(memory_repo, 5)
    task = next(t for t in tasks if issued(memory_repo, t)["candidates"])
    r = issued(memory_repo, task)
    stage(memory_repo, 1, r)
    assert check_staged(memory_repo).ok
    where = cache_dir(memory_repo.root)
    assert where is not None
    first = r["candidates"][0]
    month, tree = next(
        (m, t)
        for m, t in month_trees(memory_repo.root, _tree(memory_repo))
        if (memory_repo.root / memory_repo.episodes_rel / m / f"{first}.yaml").exists()
    )
    cache = MonthCache(where, memory_repo.episodes_rel)
    words = cache.load(month, tree)
    assert words is not None
    rows = words.rows()
    rows[first] = (rows[first][0], False)  # forged: "no correction to show"
    cache.save(month, tree, MonthWords.of(rows))
    report = check_staged(memory_repo)
    assert report.problems and {p.code for p in report.problems} == {"receipt-mismatch"}
    monkeypatch.setenv("SCARWARDEN_LEDGER_CACHE", "off")
    assert check_staged(memory_repo).ok


def test_a_damaged_entry_is_derived_again(memory_repo: MemoryRepo) -> None:
    tasks = _months_memory(memory_repo, 6)
    _agree(memory_repo, tasks, RecallSettings())
    where = cache_dir(memory_repo.root)
    assert where is not None
    for entry in (where / "words").iterdir():
        entry.write_bytes(entry.read_bytes()[:-3])  # cut short
    reader = LedgerEpisodes(memory_repo.root, memory_repo.episodes_rel)
    reader._of(_tree(memory_repo))
    assert reader.months_read == 0 and reader.read_files == 126  # 120 + 5 later copies + the broken one
    _agree(memory_repo, tasks, RecallSettings())


def test_the_ci_step_keeps_the_heads_months_where_some_were_kept(memory_repo: MemoryRepo) -> None:
    """``python -m scarwarden.gate.proofs_candidates HEAD`` (the CI action, after the
    gate): nothing where no check kept the words (a memory that never proved such
    candidates pays nothing); else the head's months from the kept ones, by a diff."""
    import os
    import subprocess

    import yaml
    from conftest import ROOT

    def warm() -> str:
        run = subprocess.run(
            [sys.executable, "-m", "scarwarden.gate.proofs_candidates", "HEAD"],
            cwd=memory_repo.root,
            capture_output=True,
            text=True,
            env={**os.environ},
            check=True,
        )
        return run.stdout.strip()

    tasks = _months_memory(memory_repo, 7, count=30)
    where = cache_dir(memory_repo.root)
    assert where is not None
    assert warm() == "no candidates' words kept" and not (where / "words").exists()
    _agree(memory_repo, tasks[:3], RecallSettings())  # a check kept them
    _write(
        memory_repo, {"id": "ep-added00002", "at": "2026-02-09T10:00:00Z", "task": "zorbel", "action": "x"}
    )
    git(memory_repo.root, "add", "-A", memory_repo.memory_rel)
    git(memory_repo.root, "commit", "-q", "--no-verify", "-m", "one more")
    assert warm() == "candidates' words kept (1 files parsed)"
    reader = LedgerEpisodes(memory_repo.root, memory_repo.episodes_rel)
    reader._of(_tree(memory_repo))
    assert reader.read_files == 0 and reader.months_read == 7
    steps = yaml.safe_load((ROOT / "action.yml").read_text())["runs"]["steps"]
    run = next(str(s["run"]) for s in steps if "scarwarden.gate.ledger" in str(s.get("run", "")))
    assert "python -m scarwarden.gate.proofs_candidates" in run
