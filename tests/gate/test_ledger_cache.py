"""The ledger cache the gate keeps for version-2 receipts (issue 20): where each cited
episode is, per tree, and the tree's statistics, decoded lazily. Neither may let a tree
whose cited episode differs pass on another tree's words, and a damaged entry is
ignored (read from git again), never trusted."""

from __future__ import annotations

import json
from typing import Any

from conftest import git
from helpers import commit_no_verify, write_episode

from scarwarden.files.episodes import Episode, parse_episode_bytes
from scarwarden.files.playbook_edit import load_playbook
from scarwarden.files.receipt import Receipt
from scarwarden.gate.check import check_staged
from scarwarden.gate.ledger import CITED, LedgerReader, cache_dir
from scarwarden.recall.engine import recall_task
from scarwarden.repo import MemoryRepo

TASK = "Post our discount code on Twitter"
SWAYING = "Post our discount code on Twitter: the discount code, on Twitter"


def issued(repo: MemoryRepo) -> dict[str, Any]:
    result = recall_task(repo, TASK, log=False)
    assert result.receipt is not None
    return result.receipt.to_json()


def forged(original: dict[str, Any], **override: Any) -> dict[str, Any]:
    fields = {k: v for k, v in original.items() if k != "receipt"}
    return Receipt.make(**{**fields, **override}).to_json()


def stage(repo: MemoryRepo, n: int, recalled: dict[str, Any], **extra: Any) -> str:
    rel = write_episode(repo, f"ep-lcch{n:06d}", task=recalled["task"], recalled=recalled, **extra)
    git(repo.root, "add", rel)
    return rel


def codes(report: Any) -> list[str]:
    return [p.code for p in report.problems]


def words(eps: dict[str, Episode]) -> list[tuple[str, str, Any]]:
    return [(i, e.task, e.get("correction")) for i, e in sorted(eps.items())]


def tree_of(repo: MemoryRepo) -> str:
    return git(repo.root, "rev-parse", f"HEAD:{repo.episodes_rel}").stdout.strip()


def swap_cited_episode(repo: MemoryRepo, not_in: list[str]) -> str:
    """Rewrite the task (and correction: recall version 5 returns no rule under half the
    best one's score, so the task's words alone no longer sway the result) of an episode
    a rule outside ``not_in`` cites (same ID, same path, new blob), committed without the
    hook; the episode's ID."""
    rule = next(r for r in load_playbook(repo).rules if r.id not in not_in and r.episode_ids)
    episode_id = sorted(rule.episode_ids)[0]
    rel = git(repo.root, "ls-files", "--", f"{repo.episodes_rel}/*/{episode_id}.yaml").stdout.strip()
    ep = parse_episode_bytes((repo.root / rel).read_bytes(), rel, episodes_dir=repo.episodes_rel)
    (repo.root / rel).write_text(Episode({**ep.data, "task": SWAYING, "correction": SWAYING}).render())
    commit_no_verify(repo.root, "a cited episode says the task's words now")
    return episode_id


def test_a_swapped_cited_episode_is_caught_with_a_warm_cache(demo_repo: MemoryRepo) -> None:
    honest = issued(demo_repo)
    rel = stage(demo_repo, 1, honest, rules_applied=honest["rules"][:1])
    report = check_staged(demo_repo)  # warms the cache: the tree's statistics and cited episodes
    assert report.ok and not report.warnings, [str(p) for p in report.problems + report.warnings]
    git(demo_repo.root, "rm", "-q", "--cached", rel)
    (demo_repo.root / rel).unlink()
    swap_cited_episode(demo_repo, honest["rules"])
    now = issued(demo_repo)
    assert now["ledger"] != honest["ledger"] and now["rules"] != honest["rules"]  # the swap sways it
    # The old ranking, claimed for the new tree: refused, although the old tree's words are cached.
    stage(demo_repo, 2, forged(honest, ledger=now["ledger"]), rules_applied=honest["rules"][:1])
    assert codes(check_staged(demo_repo)) == ["receipt-mismatch"]
    # The true ranking at the new tree proves.
    stage(demo_repo, 2, now, rules_applied=now["rules"][:1])
    report = check_staged(demo_repo)
    assert report.ok and not report.warnings, [str(p) for p in report.problems + report.warnings]


def test_the_cited_episodes_of_a_derived_tree_are_read_where_the_diff_says(demo_repo: MemoryRepo) -> None:
    where = cache_dir(demo_repo.root)
    assert where is not None
    old = issued(demo_repo)["ledger"]
    cited = sorted({i for r in load_playbook(demo_repo).rules for i in r.episode_ids})
    warm = LedgerReader(demo_repo.root, demo_repo.episodes_rel, cache_dir=where)
    before = words(warm.episodes(old, cited))
    old_cited = (where / CITED).read_bytes()
    swapped = swap_cited_episode(demo_repo, [])
    new = tree_of(demo_repo)
    got = warm.episodes(new, cited)  # derived from the old tree by the diff between them
    assert warm.derived[new].startswith("diff from") and got[swapped].task == SWAYING
    assert [w for w in words(got) if w[0] != swapped] == [w for w in before if w[0] != swapped]
    fresh = LedgerReader(demo_repo.root, demo_repo.episodes_rel, cache_dir=None)
    assert words(fresh.episodes(new, cited)) == words(got)
    # The next run knows where every cited episode of the new tree is: it reads nothing.
    again = LedgerReader(demo_repo.root, demo_repo.episodes_rel, cache_dir=where)
    assert words(again.episodes(new, cited)) == words(got) and again.read_files == 0
    # A cache that knew only the old tree: the new one is derived from it, the swap read.
    (where / f"{new}.json").unlink()
    (where / CITED).write_bytes(old_cited)
    step = LedgerReader(demo_repo.root, demo_repo.episodes_rel, cache_dir=where)
    # Read: the changed file's two versions for the statistics, the new one for its words.
    assert words(step.episodes(new, cited)) == words(got) and step.read_files == 3


def test_damaged_cache_entries_are_ignored(demo_repo: MemoryRepo) -> None:
    where = cache_dir(demo_repo.root)
    assert where is not None
    tree = issued(demo_repo)["ledger"]
    cited = sorted({i for r in load_playbook(demo_repo).rules for i in r.episode_ids})
    fresh = LedgerReader(demo_repo.root, demo_repo.episodes_rel, cache_dir=None)
    truth, truth_stats = words(fresh.episodes(tree, cited)), fresh.stats(tree)
    LedgerReader(demo_repo.root, demo_repo.episodes_rel, cache_dir=where).episodes(tree, cited)
    entry, cited_file = where / f"{tree}.json", where / CITED
    good_entry, good_cited = entry.read_bytes(), cited_file.read_bytes()
    # The cited episodes' file pointing another blob, header left as it was; then cut short.
    blob = next(iter(json.loads(good_cited.partition(b"\n")[2])["blobs"]))
    other = git(demo_repo.root, "rev-parse", f"{tree}:").stdout.strip()  # an object, not that blob
    for damaged in (good_cited.replace(blob.encode(), other.encode()), good_cited[: len(good_cited) // 2]):
        cited_file.write_bytes(damaged)
        reader = LedgerReader(demo_repo.root, demo_repo.episodes_rel, cache_dir=where)
        assert words(reader.episodes(tree, cited)) == truth and reader.read_files > 0
    # The statistics: a part cut short, parts swapped, a line dropped: derived again.
    head, _, body = good_entry.partition(b"\n")
    lines = body.split(b"\n")
    for damaged in (
        good_entry[:-10],
        head + b"\n" + b"\n".join([lines[1], lines[0], *lines[2:]]),
        head + b"\n" + b"\n".join(lines[:-1]),
    ):
        entry.write_bytes(damaged)
        reader = LedgerReader(demo_repo.root, demo_repo.episodes_rel, cache_dir=where)
        assert reader.stats(tree) == truth_stats and reader.read_files > 30
    entry.write_bytes(good_entry)
    reader = LedgerReader(demo_repo.root, demo_repo.episodes_rel, cache_dir=where)
    assert reader.stats(tree) == truth_stats and reader.read_files == 0


def test_statistics_round_trip_through_the_cache_form_and_derivations() -> None:
    """Saved, read back part by part, changed (month folders carried as changes) and
    saved again: always what counting the episodes from scratch gives."""
    from scarwarden.recall.ledger_stats import LedgerStats

    def ep(n: int, month: int, rules: list[str]) -> Episode:
        at = f"2026-{month:02d}-0{1 + n % 9}T10:00:00Z"
        return Episode(
            {"id": f"ep-rt{n:08d}", "at": at, "task": f"Task {n} about refunds", "rules_applied": rules}
        )

    eps = [ep(n, 1 + n % 3, ["PB-01"] if n % 2 else ["PB-02", "PB-03"]) for n in range(20)]
    stats = LedgerStats()
    for e in eps:
        stats.add(e)
    loaded = LedgerStats.from_bytes(stats.to_bytes())
    moved = ep(3, 11, ["PB-09"])  # the same ID, another month and rule
    for e in (eps[0], eps[3]):
        loaded.add(e, -1)
    loaded.add(moved)
    again = LedgerStats.from_bytes(loaded.to_bytes())
    assert b'"ep-rt00000003":"2026/11"' in loaded.to_bytes()  # carried as a change
    scratch = LedgerStats()
    for e in [*eps[1:3], moved, *eps[4:]]:
        scratch.add(e)
    assert (
        again == scratch
        and again.months["ep-rt00000003"] == "2026/11"
        and "ep-rt00000000" not in again.months
    )
    assert [a.id for a in again.applications("PB-09")] == ["ep-rt00000003"]
    assert LedgerStats.from_bytes(scratch.to_bytes()).to_bytes() == scratch.to_bytes()
