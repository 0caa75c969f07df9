"""Recall version 2 in memory (a playbook blob and a ledger tree, read from git) agrees
with the index-backed recall: what the gate re-derives for a version-2 receipt."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pytest
import yaml
from conftest import git
from helpers import write_playbook

from scarwarden.config import RecallSettings
from scarwarden.files import playbook as pb
from scarwarden.files.episodes import Episode
from scarwarden.gate.proofs_ledger import LedgerProofs
from scarwarden.index import open_index
from scarwarden.recall.engine import recall
from scarwarden.recall.pure import postings
from scarwarden.recall.pure_ledger import IMPLEMENTS
from scarwarden.recall.result import RecallResult
from scarwarden.recall.version import ALGORITHM
from scarwarden.repo import MemoryRepo

TASKS_YAML = Path(__file__).resolve().parents[2] / "bench" / "recall_tasks.yaml"


def _shape(result: RecallResult) -> tuple[str, list[tuple[str, float, float, float]]]:
    return result.verdict, [(r.id, r.score, r.confidence, r.evidence) for r in result.rules]


def _pure(repo: MemoryRepo, tmp: Path | None = None) -> tuple[LedgerProofs, pb.Playbook, str]:
    """A ledger reader over HEAD's episodes tree, and the committed playbook."""
    blob = git(repo.root, "rev-parse", f"HEAD:{repo.playbook_rel}").stdout.strip()
    proofs = LedgerProofs(
        repo.root, repo.playbook_rel, repo.episodes_rel, revs=["HEAD"], cache=tmp is not None
    )
    book = pb.parse(git(repo.root, "cat-file", "blob", blob).stdout)
    return proofs, book, blob


def _agree(repo: MemoryRepo, tasks: list[str], settings: RecallSettings, limit: int | None = None) -> int:
    from scarwarden.files.receipt import Receipt
    from scarwarden.recall.receipts import ledger_state

    assert ALGORITHM == IMPLEMENTS, "recall moved on: freeze version 2 in pure_ledger.py first"
    proofs, book, blob = _pure(repo)
    index_in_memory = postings(book)
    compared = 0
    with open_index(repo) as index:
        tree = ledger_state(index)
        assert tree == git(repo.root, "rev-parse", f"HEAD:{repo.episodes_rel}").stdout.strip()
        for task in tasks:
            ours = recall(index, task, limit=limit, settings=settings)
            assert ours.receipt is not None and ours.receipt.ledger == tree
            receipt = Receipt.make(
                task=ours.task,
                playbook=blob,
                algorithm=IMPLEMENTS,
                settings={**settings.__dict__, "limit": limit or settings.limit},
                verdict="ACT",
                rules=[],
                ledger=tree,
            )
            pure = proofs.recall(index_in_memory, receipt, settings)
            assert not isinstance(pure, str), pure
            assert _shape(pure) == _shape(ours), task
            assert pure.stats is not None and ours.stats is not None
            assert pure.stats.best_score == ours.stats.best_score, task
            assert [r.contributions for r in pure.rules] == [r.contributions for r in ours.rules], task
            # version 4: the same closest episode, the same evidence (what the receipt names)
            assert [r.closest_episode for r in pure.rules] == [r.closest_episode for r in ours.rules], task
            assert [r.quotes for r in pure.rules] == [r.quotes for r in ours.rules], task
            compared += 1
    return compared


def _tasks() -> list[str]:
    tasks = [t["task"] for t in yaml.safe_load(TASKS_YAML.read_text())["tasks"]]
    return tasks + ["refund", "Book a table for the team dinner", "🎉🎉", "the and of"]


def test_pure_v2_matches_the_index_on_the_demo_memory(demo_repo: MemoryRepo) -> None:
    tasks = _tasks()
    assert _agree(demo_repo, tasks, RecallSettings()) == len(tasks)
    assert _agree(demo_repo, tasks, RecallSettings(act_threshold=0.14, floor=0.05, limit=2), limit=2)
    assert _agree(demo_repo, tasks, RecallSettings(floor=0.0, act_threshold=0.0, limit=20))


def _words(rng: random.Random) -> list[str]:
    return [f"{a}{b}" for a in ("ka", "lo", "mi", "tur", "sen", "vop") for b in ("ra", "den", "mol", "pix")]


def _generated_memory(repo: MemoryRepo, seed: int, rules: int = 30, episodes: int = 60) -> list[str]:
    """A playbook whose rules cite generated episodes; episodes that apply rules, some
    corrected (so lineage can make a rule struggle); returns tasks to recall."""
    rng = random.Random(seed)
    words = _words(rng)
    eps = []
    for i in range(episodes):
        data = {
            "id": f"ep-gen{seed}{i:05d}",
            "at": f"2026-11-{1 + i % 28:02d}T10:00:00Z",
            "task": " ".join(rng.choices(words + ["customer", "agent"], k=rng.randint(2, 14))),
            "action": "done",
        }
        if rng.random() < 0.4:
            data["correction"] = " ".join(rng.choices(words, k=rng.randint(2, 8)))
        if rng.random() < 0.7:
            data["rules_applied"] = sorted({f"PB-{rng.randint(1, 4):02d}" for _ in range(rng.randint(1, 2))})
            data["outcome"] = "fine"
        eps.append(data)
        ep = Episode(data)
        path = repo.root / ep.relpath(repo.episodes_rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(ep.render())
    tags = [rng.choice(words) + ("-" + rng.choice(words) if rng.random() < 0.3 else "") for _ in range(12)]
    book = pb.Playbook(
        rules=tuple(
            pb.make_rule(
                f"PB-{i:02d}",
                " ".join(rng.choices(words, k=3)).capitalize(),
                " ".join(rng.choices(words, k=rng.randint(4, 25))) + ".",
                sorted(set(rng.sample(tags, rng.randint(0, 3)))),
                sorted({rng.choice(eps)["id"] for _ in range(rng.randint(1, 3))}) + ["ep-missing0001"],
            )
            for i in range(1, rules + 1)
        )
    )
    repo.playbook_path.write_text(pb.render(book))
    git(repo.root, "add", "-A", repo.memory_rel)
    git(repo.root, "commit", "-q", "--no-verify", "-m", "generated")
    return [" ".join(rng.choices(words + ["unknown", "customer"], k=rng.randint(1, 12))) for _ in range(60)]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_pure_v2_matches_the_index_on_generated_memories(memory_repo: MemoryRepo, seed: int) -> None:
    tasks = _generated_memory(memory_repo, seed)
    assert _agree(memory_repo, tasks, RecallSettings()) == len(tasks)
    with open_index(memory_repo) as index:  # version 3's pairs are part of what agrees
        loose = RecallSettings(floor=0.0, act_threshold=0.0)
        ranked = [r for t in tasks for r in recall(index, t, settings=loose).rules]
    assert sum(any(k.startswith("pair:") for k in r.contributions) for r in ranked) >= 10
    assert _agree(memory_repo, tasks, RecallSettings(floor=0.0, act_threshold=0.0, limit=3), limit=3)
    assert _agree(memory_repo, tasks, RecallSettings(act_threshold=0.05, floor=0.01, act_tag_hits=1))


def test_a_struggling_rule_flags_alike(memory_repo: MemoryRepo) -> None:
    """A rule corrected in most of its applications keeps ACT off in both recalls."""
    write_playbook(
        memory_repo,
        [("PB-01", "Refund approvals", "Refunds above fifty euros need a manager approval.", ["refund"])],
        commit=True,
    )
    task = "approve a refund above fifty euros for the manager"
    for i in range(4):
        data = {
            "id": f"ep-strug{i:05d}",
            "at": f"2099-01-0{i + 1}T10:00:00Z",
            "task": f"refund case {i}",
            "action": "applied PB-01",
            "rules_applied": ["PB-01"],
            "correction": "wrong: ask finance",
        }
        path = memory_repo.root / Episode(data).relpath(memory_repo.episodes_rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(Episode(data).render())
    git(memory_repo.root, "add", "-A", "memory")
    git(memory_repo.root, "commit", "-q", "--no-verify", "-m", "corrections")
    with open_index(memory_repo) as index:
        result = recall(index, task, settings=RecallSettings())
        # The router alone says ACT; lineage keeps it off the struggling rule.
        assert result.verdict == "ACT_AND_FLAG" and result.stats is not None and result.stats.route() == "ACT"
    assert _agree(memory_repo, [task], RecallSettings()) == 1


#: pure_ledger's output on a generated memory, pinned: recall version 2 as the gate
#: re-derives it. When the engine moves to version 3, this must not move.
PINNED_V2 = "306a264ab05b3068"


def test_pure_v2_output_is_pinned(memory_repo: MemoryRepo) -> None:
    tasks = _generated_memory(memory_repo, 7)
    proofs, book, blob = _pure(memory_repo)
    tree = git(memory_repo.root, "rev-parse", f"HEAD:{memory_repo.episodes_rel}").stdout.strip()
    from scarwarden.files.receipt import Receipt

    v2 = RecallSettings(act_threshold=0.175, floor=0.0925, act_tag_hits=2, limit=5)
    out = []
    index = postings(book)
    for task in tasks:
        r = Receipt.make(
            task=task.strip(),
            playbook=blob,
            algorithm=2,
            settings={**v2.__dict__},
            verdict="ACT",
            rules=[],
            ledger=tree,
        )
        result = proofs.recall(index, r, v2)
        assert not isinstance(result, str)
        out.append([result.verdict, [[x.id, x.score, x.confidence, x.evidence] for x in result.rules]])
    assert hashlib.sha256(json.dumps(out).encode()).hexdigest()[:16] == PINNED_V2
