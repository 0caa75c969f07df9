"""What recall receipts cost (issue 20): issuing one, and the gate proving thousands.

    python bench/receipts_bench.py            # 1,000 and 10,000 episodes in one commit
    python bench/receipts_bench.py --quick    # 1,000 only
    python bench/receipts_bench.py --ledger   # one receipt, ledgers of 1k and 100k

``--ledger`` is the hook's everyday case: a generated ledger of N committed episodes
(bench/_gen.py), one staged episode carrying the receipt recall (the engine, over the
index) gives now (version 3 since 2026-12-01), naming HEAD's ledger tree. ``check_staged`` is timed with
no ledger cache (a fresh clone), with this tree cached (a second commit attempt), with
only the previous tree cached (the usual case: the last commit's ledger was proved, one
episode was added since), and beside the same episode without a receipt (the baseline).

A throwaway repository holds the demo memory. N new episodes are staged in one commit,
each carrying the receipt recall gives for its own task (distinct tasks: one of the 66
tasks of bench/recall_tasks.yaml with a number appended, so every receipt is a recall of
its own); `check_staged` (what the pre-commit hook runs) is timed on them, beside the
same N episodes without receipts in the same run (the baseline). Issuing is timed as
`make_receipt` alone against a whole in-process recall on the demo memory.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scarwarden.config import RecallSettings  # noqa: E402
from scarwarden.files import playbook as pb  # noqa: E402
from scarwarden.files.episodes import expected_relpath, render_episode  # noqa: E402
from scarwarden.files.receipt import Receipt  # noqa: E402
from scarwarden.files.scaffold import init as init_memory  # noqa: E402
from scarwarden.gate.check import check_staged  # noqa: E402
from scarwarden.index import open_index  # noqa: E402
from scarwarden.recall.engine import recall  # noqa: E402
from scarwarden.recall.pure import postings, recall_playbook  # noqa: E402
from scarwarden.recall.receipts import ledger_state, make_receipt, playbook_blob  # noqa: E402
from scarwarden.repo import open_repo  # noqa: E402

TASKS = [t["task"] for t in yaml.safe_load((ROOT / "bench/recall_tasks.yaml").read_text())["tasks"]]
SETTINGS = {"act_threshold": 0.175, "floor": 0.0925, "act_tag_hits": 2, "limit": 5}


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def make_repo(where: Path):  # type: ignore[no-untyped-def]
    root = where / "repo"
    root.mkdir()
    git(root, "init", "-q")
    git(root, "config", "user.email", "bench@example.com")
    git(root, "config", "user.name", "bench")
    init_memory(open_repo(root, initialised=False), demo=True)
    return open_repo(root)


def stage_episodes(repo, n: int, with_receipts: bool, offset: int) -> None:  # type: ignore[no-untyped-def]
    blob = git(repo.root, "rev-parse", f"HEAD:{repo.playbook_rel}").strip()
    index = postings(pb.parse(git(repo.root, "cat-file", "blob", blob)))
    settings = RecallSettings(**SETTINGS)
    for i in range(n):
        task = f"{TASKS[i % len(TASKS)]} {i}"
        data = {
            "id": f"ep-bench{offset + i:07d}",
            "at": "2026-11-20T10:00:00Z",
            "task": task,
            "action": "done",
        }
        if with_receipts:
            result = recall_playbook(index, task, settings=settings)
            rules = [r.id for r in result.rules]
            data["rules_applied"] = rules[:1] or None
            data["recalled"] = Receipt.make(
                task=task,
                playbook=blob,
                algorithm=1,  # a playbook-only receipt: the bulk case, many tasks
                settings=SETTINGS,
                verdict=result.verdict,
                rules=rules,
            ).to_json()
        data = {k: v for k, v in data.items() if v is not None}
        path = repo.root / expected_relpath(data["id"], data["at"], repo.episodes_rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render_episode(data))
    git(repo.root, "add", "-A", repo.memory_rel)


def time_proofs(repo, runs: int = 3) -> float:  # type: ignore[no-untyped-def]
    """The proving alone: re-running recall for every staged receipt (parsed already)."""
    from scarwarden.files.episodes import parse_episode_bytes
    from scarwarden.gate.proofs import Prover

    paths = git(repo.root, "diff", "--cached", "--name-only", "--", repo.episodes_rel).split()
    episodes = [(p, parse_episode_bytes((repo.root / p).read_bytes(), p)) for p in paths]
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        proofs = Prover(repo.root, repo.playbook_rel).prove_all(episodes)
        times.append(time.perf_counter() - start)
        assert all(p.status == "proved" for p in proofs)
    return statistics.median(times)


def time_check(repo, runs: int = 3) -> tuple[float, dict[str, int]]:  # type: ignore[no-untyped-def]
    times, stats = [], {}
    for _ in range(runs):
        start = time.perf_counter()
        report = check_staged(repo)
        times.append(time.perf_counter() - start)
        assert report.ok, [str(p) for p in report.problems[:3]]
        stats = dict(report.stats)
    return statistics.median(times), stats


def issuing(repo) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """Median microseconds: make_receipt alone, a whole in-process recall."""
    settings = repo.config.recall
    with open_index(repo) as index:
        results = [recall(index, t, settings=settings) for t in TASKS]
        start = time.perf_counter()
        for _ in range(20):
            for t in TASKS:
                recall(index, t, settings=settings)
        per_recall = (time.perf_counter() - start) / (20 * len(TASKS)) * 1e6
        start = time.perf_counter()
        for _ in range(200):
            for r in results:
                # The whole receipt: the playbook's blob and the ledger's tree as the
                # index remembers them (git asked once per HEAD), then the hash.
                make_receipt(r, playbook_blob(index), settings, 5, ledger=ledger_state(index))
        per_receipt = (time.perf_counter() - start) / (200 * len(results)) * 1e6
    return per_receipt, per_recall


def _stage_one(repo, n: int, receipt: dict | None) -> str:  # type: ignore[no-untyped-def]
    data = {"id": f"ep-ledgr{n:05d}", "at": "2026-11-29T10:00:00Z", "action": "done"}
    data["task"] = receipt["task"] if receipt else "Post our discount code on Twitter"
    if receipt:
        data["recalled"] = receipt
        data["rules_applied"] = receipt["rules"][:1] or None
    data = {k: v for k, v in data.items() if v is not None}
    rel = expected_relpath(data["id"], data["at"], repo.episodes_rel)
    (repo.root / rel).parent.mkdir(parents=True, exist_ok=True)
    (repo.root / rel).write_text(render_episode(data))
    git(repo.root, "add", rel)
    return rel


def _timed_check(repo, before=None, runs: int = 3) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(runs):
        if before:
            before()
        start = time.perf_counter()
        report = check_staged(repo)
        times.append(time.perf_counter() - start)
        assert report.ok and not report.warnings, [str(p) for p in report.problems + report.warnings][:3]
    return statistics.median(times)


def ledger_case(n: int, where: Path) -> str:
    """One receipt, a ledger of ``n`` episodes: the row of the ``--ledger`` table."""
    import shutil

    from _gen import make_repo as generated

    from scarwarden.gate.ledger import CITED, cache_dir
    from scarwarden.recall.engine import recall_task

    repo = open_repo(generated(n, where / "repo"))
    cache = cache_dir(repo.root)
    assert cache is not None
    task = TASKS[1]
    rel = _stage_one(repo, 0, None)
    base = _timed_check(repo)
    git(repo.root, "rm", "-q", "--cached", rel)
    (repo.root / rel).unlink()  # left in the folder, recall's receipt would say +uncommitted
    receipt = recall_task(repo, task, log=False).receipt.to_json()
    rel = _stage_one(repo, 1, receipt)

    def forget() -> None:
        shutil.rmtree(cache, ignore_errors=True)

    cold = _timed_check(repo, forget)
    warm = _timed_check(repo)
    # One more episode committed: the next receipt names a new tree, the cache the old one.
    git(repo.root, "commit", "-q", "--no-verify", "-m", "one more")
    old_tree = receipt["ledger"]
    receipt = recall_task(repo, task + " again", log=False).receipt.to_json()
    assert receipt["ledger"] != old_tree
    rel = _stage_one(repo, 2, receipt)
    new_entry, cited = cache / f"{receipt['ledger']}.json", cache / CITED
    known = cited.read_bytes()  # what the previous commit's check left: the old tree only

    def previous_only() -> None:
        new_entry.unlink(missing_ok=True)
        cited.write_bytes(known)

    step = _timed_check(repo, previous_only)
    return (
        f"| {n:,} | {base * 1000:.0f} ms | {cold * 1000:.0f} ms ({cold / base:.1f}x) | "
        f"{warm * 1000:.0f} ms ({warm / base:.1f}x) | {step * 1000:.0f} ms ({step / base:.1f}x) |"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--ledger", action="store_true", help="one receipt, ledgers of 1k and 100k")
    args = parser.parse_args()
    if args.ledger:
        sys.path.insert(0, str(ROOT / "bench"))
        print(
            "| ledger episodes | check, no receipt | one receipt, no cache | this tree cached | "
            "previous tree cached |"
        )
        print("|---|---|---|---|---|")
        for n in (1000, 100_000):
            with tempfile.TemporaryDirectory() as tmp:
                print(ledger_case(n, Path(tmp)), flush=True)
        return
    sizes = [1000] if args.quick else [1000, 10000]
    with tempfile.TemporaryDirectory() as tmp:
        repo = make_repo(Path(tmp))
        receipt_us, recall_us = issuing(repo)
        print(
            f"issuing: make_receipt {receipt_us:.1f} us vs a whole recall {recall_us:.0f} us "
            f"({receipt_us / recall_us:.1%} of it)"
        )
    print(
        "| episodes in one commit | check_staged, no receipts | with receipts | ratio | "
        "of which proving | proving per receipt |"
    )
    print("|---|---|---|---|---|---|")
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            repo = make_repo(Path(tmp))
            stage_episodes(repo, n, False, 0)
            base, _ = time_check(repo)
        with tempfile.TemporaryDirectory() as tmp:
            repo = make_repo(Path(tmp))
            stage_episodes(repo, n, True, 0)
            with_r, stats = time_check(repo)
            assert stats.get("receipts_checked") == n, stats
            proving = time_proofs(repo)
        print(
            f"| {n:,} | {base * 1000:.0f} ms | {with_r * 1000:.0f} ms | {with_r / base:.2f}x | "
            f"{proving * 1000:.0f} ms | {proving / n * 1e6:.0f} us |"
        )


if __name__ == "__main__":
    main()
