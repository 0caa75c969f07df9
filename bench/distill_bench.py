"""Distillation cost as the ledger grows: a distillation should cost what is new.

For ledgers of 100, 1,000 and 10,000 episodes (already distilled: rules cite them) and 20
new episodes, runs the model distiller against the local fake chat-completions server
(tests/fakellm.py; it reports no usage, so tokens are the prompt's characters/4) and
prints model input tokens and calls per new episode, with the ratio to the smallest
ledger. Target: flat within 20%.

Two playbook shapes:
  consolidated  one rule per topic (60 topics), each citing all of its episodes: the
                playbook stays small while citations pile up (a rule may cite 170);
  growing       one rule per 10 episodes (10 -> 1,000 rules): context selection has more
                candidates, but is capped by distill.max_context_rules.

Then the offline distiller on a ledger of 10,000 new episodes: wall time.

Last, what the playbook learns (bench/distill_lessons.py, issue 12): on a generated
ledger where later corrections refine or reverse earlier ones, the share of lessons
present in the final playbook, of reversals caught, and the rules citing an episode
that contradicts them, offline and with the fake model replaying ideal answers.

    python bench/distill_bench.py            # 100, 1,000, 10,000
    python bench/distill_bench.py --quick    # 100, 1,000; offline on 1,000
    python bench/distill_bench.py --lessons  # only the lessons benchmark
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from distill_lessons import print_table, run_all  # noqa: E402
from fakellm import FakeLLM, reply_json  # noqa: E402

from scarwarden.config import ModelSettings  # noqa: E402
from scarwarden.distill import distill  # noqa: E402
from scarwarden.files import playbook as pb  # noqa: E402
from scarwarden.files.episodes import Episode  # noqa: E402
from scarwarden.files.scaffold import init  # noqa: E402
from scarwarden.llm.client import ChatClient  # noqa: E402
from scarwarden.repo import MemoryRepo, open_repo  # noqa: E402

CACHE = ROOT / "bench" / ".cache" / "distill"
NEW = 20
AREAS = [
    "webinar",
    "newsletter",
    "invoice",
    "refund",
    "linkedin",
    "blog",
    "release",
    "incident",
    "gdpr",
    "review",
    "discount",
    "translation",
    "onboarding",
    "pricing",
    "survey",
    "podcast",
    "video",
    "hiring",
    "security",
    "partner",
]
ASPECTS = [
    "timezone",
    "subject",
    "approval",
    "tone",
    "deadline",
    "format",
    "privacy",
    "escalation",
    "caption",
    "keyword",
]
CLIENTS = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark", "Wayne", "Wonka"]
ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}


def topics() -> list[tuple[str, str]]:
    rng = random.Random(7)
    pairs = [(a, b) for a in AREAS for b in ASPECTS]
    rng.shuffle(pairs)
    return pairs[:60]


def episode(i: int, topic: tuple[str, str], rng: random.Random, prefix: str) -> dict[str, Any]:
    area, aspect = topic
    client = rng.choice(CLIENTS)
    day = 1 + i % 28
    month = 1 + (i // 28) % 12
    return {
        "id": f"ep-{prefix}{i:07d}",
        "at": f"2025-{month:02d}-{day:02d}T{9 + i % 8:02d}:{i % 60:02d}:00Z",
        "agent": "writer",
        "task": f"Prepare the {area} {aspect} work for {client}, batch {i}",
        "action": f"Drafted the {area} piece without checking the {aspect} guidance",
        "outcome": f"{client} asked for a second round because the {aspect} was wrong",
        "correction": f"For every {area} piece, settle the {aspect} first and confirm it "
        f"with the owner before drafting",
        "corrected_by": "lead",
        "tags": [area, aspect],
        "source": "correction",
    }


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, env=ENV, capture_output=True)


def write_episodes(repo: MemoryRepo, items: list[dict[str, Any]]) -> None:
    for data in items:
        ep = Episode(data)
        path = repo.root / ep.relpath(repo.episodes_rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(ep.render(), encoding="utf-8")


def base_ledger(n: int) -> Path:
    """A cached repository with ``n`` committed episodes and an empty playbook."""
    path = CACHE / f"ledger-{n}"
    if (path / ".git" / "bench-complete").exists():
        return path
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    init(open_repo(path, initialised=False), commit=False)
    rng = random.Random(n)
    all_topics = topics()
    write_episodes(open_repo(path), [episode(i, all_topics[rng.randrange(60)], rng, "old") for i in range(n)])
    git(path, "add", "-A")
    # No background auto-gc racing the explicit one (git commit may start it).
    git(path, "-c", "gc.auto=0", "commit", "-q", "-m", f"bench: {n} episodes")
    git(path, "gc", "-q")
    (path / ".git" / "bench-complete").write_text("")
    return path


def clone(source: Path, parent: Path, name: str) -> MemoryRepo:
    target = parent / name
    git(parent, "clone", "-q", str(source), str(target))
    return open_repo(target)


def write_playbook(repo: MemoryRepo, shape: str) -> int:
    """Rules citing the old episodes (so they count as distilled); returns the rule count."""
    by_topic: dict[tuple[str, str], list[str]] = {}
    for path in sorted(repo.episodes_dir.rglob("*.yaml")):
        text = path.read_text()
        tags = re.search(r"^tags: \[(\w+), (\w+)\]", text, re.M)
        assert tags is not None
        by_topic.setdefault((tags.group(1), tags.group(2)), []).append(path.stem)
    book = pb.empty()
    groups: list[tuple[tuple[str, str], list[str]]] = []
    for topic, ids in sorted(by_topic.items()):
        if shape == "consolidated":
            groups.append((topic, ids))
        else:
            groups += [(topic, ids[i : i + 10]) for i in range(0, len(ids), 10)]
    for k, ((area, aspect), ids) in enumerate(groups):
        rule = pb.make_rule(
            book.next_id(),
            f"Settle the {aspect} of {area} work first ({k})",
            f"For {area} work, agree the {aspect} with the owner before drafting, "
            f"and confirm it in writing. Variant {k}.",
            [area, aspect],
            ids,
        )
        book = book.with_rule(rule)
    repo.playbook_path.write_text(pb.render(book), encoding="utf-8")
    git(repo.root, "add", repo.playbook_rel)
    git(repo.root, "commit", "-q", "-m", "bench: playbook")
    return len(book.rules)


def add_new(repo: MemoryRepo) -> None:
    rng = random.Random(2026)
    all_topics = topics()
    write_episodes(repo, [episode(i, all_topics[rng.randrange(60)], rng, "new") for i in range(NEW)])
    git(repo.root, "add", "-A", repo.episodes_rel)
    git(repo.root, "commit", "-q", "-m", "bench: 20 new episodes")


def update_first(body: dict[str, Any]) -> dict[str, Any]:
    """The fake model: update the first context rule with the first new episode."""
    prompt = body["messages"][-1]["content"]
    rules = re.findall(r'\{"id": "(PB-\d+)"', prompt)
    eps = re.findall(r'\{"id": "(ep-new\d+)"', prompt)
    ops = [{"op": "update", "rule_id": rules[0], "episode_ids": eps[:1]}] if rules and eps else []
    return reply_json({"operations": ops}, prompt_tokens=None)


def model_run(n: int, shape: str, llm: FakeLLM, parent: Path) -> dict[str, float]:
    repo = clone(base_ledger(n), parent, f"{shape}-{n}")
    rules = write_playbook(repo, shape)
    add_new(repo)
    client = ChatClient(ModelSettings(base_url=llm.url, backoff=0.01, distill_model="fake"), "sk-bench")
    start = time.perf_counter()
    result = distill(repo, client=client)
    wall = time.perf_counter() - start
    assert result.commit and len(result.new) == NEW, result.new[:3]
    assert result.usage.estimated
    context = sum(b[1] for b in result.batches)
    return {
        "n": n,
        "rules": rules,
        "tokens": result.usage.prompt_tokens,
        "calls": result.calls,
        "context": context,
        "wall": wall,
    }


def offline_run(n: int, parent: Path) -> tuple[float, int, int, float]:
    repo = clone(base_ledger(n), parent, f"offline-{n}")
    start = time.perf_counter()
    result = distill(repo, offline=True)
    wall = time.perf_counter() - start
    added = sum(1 for c in result.changes if c.kind == "add")
    start = time.perf_counter()
    again = distill(repo, offline=True)
    assert again.new == [] and again.commit is None
    return wall, len(result.distilled), added, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="100 and 1,000 only")
    parser.add_argument("--lessons", action="store_true", help="only the lessons benchmark")
    args = parser.parse_args()
    if args.lessons:
        with tempfile.TemporaryDirectory(prefix="distill-lessons-") as tmp:
            print_table(run_all(Path(tmp)))
        return
    sizes = [100, 1000] if args.quick else [100, 1000, 10_000]
    offline_n = 1000 if args.quick else 10_000
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="distill-bench-") as tmp, FakeLLM(default=update_first) as llm:
        parent = Path(tmp)
        for n in sorted(set(sizes + [offline_n])):
            t = time.perf_counter()
            base_ledger(n)
            print(f"ledger of {n:>6} episodes ready ({time.perf_counter() - t:.1f} s)", flush=True)
        for shape in ("consolidated", "growing"):
            print(f"\nmodel distiller, {NEW} new episodes, playbook {shape}:")
            print(
                f"{'ledger':>8} {'rules':>6} {'calls':>6} {'ctx rules':>9} {'tokens':>7} "
                f"{'tok/new ep':>10} {'calls/new ep':>12} {'ratio':>6} {'wall s':>7}"
            )
            baseline = None
            for n in sizes:
                row = model_run(n, shape, llm, parent)
                per = row["tokens"] / NEW
                baseline = baseline or per
                print(
                    f"{n:>8} {row['rules']:>6} {row['calls']:>6} {row['context']:>9} "
                    f"{row['tokens']:>7} {per:>10.1f} {row['calls'] / NEW:>12.3f} "
                    f"{per / baseline:>6.2f} {row['wall']:>7.2f}",
                    flush=True,
                )
        wall, distilled, added, again = offline_run(offline_n, parent)
        print(
            f"\noffline distiller on {offline_n:,} new episodes: {wall:.2f} s wall, commit "
            f"included ({distilled} distilled into {added} new rules, "
            f"{wall / offline_n * 1000:.2f} ms per episode); run again, nothing new: {again:.2f} s"
        )
        print_table(run_all(parent))


if __name__ == "__main__":
    main()
