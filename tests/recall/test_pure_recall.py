"""The in-memory recall (what the gate re-runs) agrees with the index-backed recall."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pytest
import yaml
from helpers import write_playbook

from scarwarden.config import RecallSettings
from scarwarden.files import playbook as pb
from scarwarden.files import receipt as receipt_format
from scarwarden.index import open_index
from scarwarden.recall import engine
from scarwarden.recall.engine import recall
from scarwarden.recall.pure import IMPLEMENTS, postings, recall_playbook
from scarwarden.recall.result import RecallResult
from scarwarden.recall.version import ALGORITHM
from scarwarden.repo import MemoryRepo

TASKS_YAML = Path(__file__).resolve().parents[2] / "bench" / "recall_tasks.yaml"


def _shape(result: RecallResult) -> tuple[str, list[tuple[str, float, float]]]:
    return result.verdict, [(r.id, r.score, r.confidence) for r in result.rules]


def _agree(repo: MemoryRepo, tasks: list[str], settings: RecallSettings, limit: int | None = None) -> int:
    if ALGORITHM != IMPLEMENTS:
        pytest.skip(
            f"recall is version {ALGORITHM}; pure.py stays version {IMPLEMENTS}'s frozen reference "
            "(tests/recall/test_pure_ledger.py checks the version the engine runs)"
        )
    book = pb.parse(repo.playbook_path.read_text())
    index_in_memory = postings(book)
    compared = 0
    with open_index(repo) as index:
        for task in tasks:
            ours = recall(index, task, limit=limit, settings=settings)
            pure = recall_playbook(index_in_memory, task, settings=settings, limit=limit)
            # A difference here means recall changed: bump scarwarden.recall.version.ALGORITHM
            # (old receipts then stay unverifiable, never wrongly checked).
            assert _shape(pure) == _shape(ours), task
            assert pure.stats is not None and ours.stats is not None
            assert pure.stats.best_score == ours.stats.best_score, task
            compared += 1
    return compared


def test_pure_recall_matches_the_index_on_the_demo_memory(demo_repo: MemoryRepo) -> None:
    tasks = [t["task"] for t in yaml.safe_load(TASKS_YAML.read_text())["tasks"]]
    tasks += ["refund", "Book a table for the team dinner", "🎉🎉", "the and of"]
    assert _agree(demo_repo, tasks, RecallSettings()) == len(tasks)
    # Other settings and limits: the floor and the cut move, the two still agree.
    assert _agree(demo_repo, tasks, RecallSettings(act_threshold=0.14, floor=0.05, limit=2), limit=2)
    assert _agree(demo_repo, tasks, RecallSettings(floor=0.0, act_threshold=0.0, limit=20))


def _generated(seed: int, n: int) -> tuple[list[tuple[str, str, str, list[str]]], list[str]]:
    """Rules of random words from a small vocabulary (many shared stems, many ties)."""
    rng = random.Random(seed)
    words = [f"{a}{b}" for a in ("ka", "lo", "mi", "tur", "sen", "vop") for b in ("ra", "den", "mol", "pix")]
    tags = [rng.choice(words) + ("-" + rng.choice(words) if rng.random() < 0.3 else "") for _ in range(12)]
    rules = [
        (
            f"PB-{i:02d}",
            " ".join(rng.choices(words, k=3)).capitalize(),
            " ".join(rng.choices(words, k=rng.randint(4, 25))) + ".",
            sorted(set(rng.sample(tags, rng.randint(0, 3)))),
        )
        for i in range(1, n + 1)
    ]
    tasks = [" ".join(rng.choices(words + ["unknown", "zzz"], k=rng.randint(1, 12))) for _ in range(60)]
    return rules, tasks


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_pure_recall_matches_the_index_on_generated_playbooks(memory_repo: MemoryRepo, seed: int) -> None:
    rules, tasks = _generated(seed, 40)
    write_playbook(memory_repo, rules, commit=True)
    assert _agree(memory_repo, tasks, RecallSettings()) == len(tasks)
    assert _agree(memory_repo, tasks, RecallSettings(floor=0.0, act_threshold=0.0, limit=3), limit=3)


def test_retired_rules_are_not_recalled_by_either(memory_repo: MemoryRepo) -> None:
    retired = pb.make_rule("PB-09", "Old refunds", "Refund everything by cheque.", ["refund"], ["ep-abc"])
    write_playbook(
        memory_repo,
        [("PB-01", "Approve refunds", "Refunds need approval.", ["refund"])],
        commit=True,
        retired=(pb.Rule(**{**retired.__dict__, "retired": True, "reason": "old"}),),
    )
    assert _agree(memory_repo, ["refund by cheque", "approve the refund"], RecallSettings()) == 2


#: The recall algorithm's output on a fixed playbook, pinned to its version number.
#: When this fails, recall's output changed: bump ``scarwarden.recall.version.ALGORITHM``
#: (receipts made before the change must then be reported as unverifiable, not checked
#: against the new arithmetic) and put the new fingerprint and version here.
#: Version 4 gives version 3's output here (this playbook cites no episode and has no rule
#: past LONG_RULE x the average): tests/recall/test_recall_v4.py shows what it changes.
#: Version 5 changes the evidence (none here), the long-rule cap (no long rule here) and
#: leaves out a rule under half the best one's score (router.RETURN_SHARE): that moves
#: this fingerprint; tests/recall/test_recall_v5.py shows what it changes.
PINNED = {
    1: "f079c494a79b9f99",
    2: "0ab2b6dab55338fe",
    3: "8cdb4fe29bcfabda",
    4: "8cdb4fe29bcfabda",
    5: "4133b669cd44eef6",
    # version 6's same-case term reads the cited episodes' tasks: this generated playbook
    # cites none, so its output is version 5's (tests/recall/test_recall_v6.py moves it)
    6: "4133b669cd44eef6",
}


def test_algorithm_version_is_bumped_when_recall_output_changes(memory_repo: MemoryRepo) -> None:
    rules, tasks = _generated(7, 30)
    write_playbook(memory_repo, rules, commit=True)
    out = []
    with open_index(memory_repo) as index:
        for task in tasks:
            result = recall(index, task, settings=RecallSettings())
            rows = [[r.id, r.score, r.confidence, r.evidence, r.matched_tags] for r in result.rules]
            out.append([result.verdict, rows])
    fingerprint = hashlib.sha256(json.dumps(out).encode()).hexdigest()[:16]
    assert PINNED.get(ALGORITHM) == fingerprint, (
        f"recall's output is now {fingerprint}; bump ALGORITHM (now {ALGORITHM}) in "
        "scarwarden/recall/version.py and pin the new fingerprint in PINNED"
    )


def test_receipt_task_cap_is_recalls() -> None:
    assert receipt_format.MAX_TASK_CHARS == engine.MAX_TASK_CHARS


def test_pure_recall_still_gives_version_1() -> None:
    """What the gate re-derives stays version 1's arithmetic, whatever the engine does
    now: the same fingerprint the engine gave at version 1 (with version 1's defaults)."""
    rules, tasks = _generated(7, 30)
    book = pb.Playbook(rules=tuple(pb.make_rule(i, t, x, g, ["ep-abc"]) for i, t, x, g in rules))
    index = postings(book)
    v1 = RecallSettings(act_threshold=0.175, floor=0.0925, act_tag_hits=2, limit=5)
    out = []
    for task in tasks:
        result = recall_playbook(index, task, settings=v1)
        rows = [[r.id, r.score, r.confidence, r.evidence, r.matched_tags] for r in result.rules]
        out.append([result.verdict, rows])
    assert hashlib.sha256(json.dumps(out).encode()).hexdigest()[:16] == PINNED[IMPLEMENTS]
