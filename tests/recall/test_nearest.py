"""ASK_HUMAN's candidates re-derived without the index (issue 26): what the gate computes
from a playbook blob and a ledger tree (:mod:`scarwarden.recall.nearest`) equals what the
engine showed (:mod:`scarwarden.recall.given`): the same rules or failed episodes, in the
same order, with the same scores and evidence, on the demo memory and generated ones."""

from __future__ import annotations

import random

import pytest
from conftest import git
from test_pure_ledger import _generated_memory, _pure, _tasks

from scarwarden.config import RecallSettings
from scarwarden.files.episodes import Episode
from scarwarden.files.receipt import Receipt
from scarwarden.gate.proofs_candidates import LedgerEpisodes
from scarwarden.index import open_index
from scarwarden.recall import nearest
from scarwarden.recall.engine import recall
from scarwarden.recall.pure import postings
from scarwarden.recall.pure_ledger import VERSIONS
from scarwarden.recall.receipts import ledger_state
from scarwarden.repo import MemoryRepo

#: Words no rule and no cited episode says: tasks made of them find no rule.
APART = ["zorbel", "quindar", "plimsy", "traddle", "wexen", "fonteg"]


def _apart_episodes(repo: MemoryRepo, seed: int, count: int = 40) -> list[str]:
    """Episodes no rule cites, about words no rule says (some corrected, some redacted
    later by the caller); returns tasks made of those words."""
    rng = random.Random(seed)
    for i in range(count):
        data = {
            "id": f"ep-apart{seed}{i:04d}",
            "at": f"2026-10-{1 + i % 28:02d}T10:00:00Z",
            "task": " ".join(rng.choices(APART, k=rng.randint(1, 5))),
            "action": "done",
        }
        if rng.random() < 0.6:
            data["correction"] = ". ".join(
                " ".join(rng.choices(APART, k=4)) for _ in range(rng.randint(1, 3))
            )
        path = repo.root / Episode(data).relpath(repo.episodes_rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(Episode(data).render())
    git(repo.root, "add", "-A", repo.memory_rel)
    git(repo.root, "commit", "-q", "--no-verify", "-m", "apart")
    return [" ".join(rng.choices(APART, k=rng.randint(1, 4))) for _ in range(30)]


def _shape(candidates: list) -> list:  # type: ignore[type-arg]
    return [(c.kind, c.id, c.title, c.text, c.score, c.confidence, c.quotes) for c in candidates]


def _agree(repo: MemoryRepo, tasks: list[str], settings: RecallSettings) -> tuple[int, int]:
    """Compare every ASK_HUMAN's candidates; (rule candidates seen, episode candidates seen)."""
    proofs, book, blob = _pure(repo)
    index_in_memory = postings(book)
    seen = [0, 0]
    with open_index(repo) as index:
        tree = ledger_state(index)
        reader = LedgerEpisodes(repo.root, repo.episodes_rel)
        near = reader.candidates(tree)
        for task in tasks:
            ours = recall(index, task, settings=settings)
            receipt = Receipt.make(
                task=ours.task,
                playbook=blob,
                algorithm=VERSIONS[-1],
                settings={**settings.__dict__},
                verdict="ASK_HUMAN",
                rules=[],
                ledger=tree,
            )
            pure = proofs.recall(index_in_memory, receipt, settings, candidates=near)
            assert not isinstance(pure, str), pure
            assert pure.verdict == ours.verdict, task
            assert _shape(pure.candidates) == _shape(ours.candidates), task
            assert nearest.shown_candidates(pure) == nearest.shown_candidates(ours), task
            for c in ours.candidates:
                seen[c.kind == "episode"] += 1
    return seen[0], seen[1]


def test_the_gate_shows_the_engines_candidates_on_the_demo_memory(demo_repo: MemoryRepo) -> None:
    rules, _episodes = _agree(demo_repo, _tasks(), RecallSettings())
    assert rules >= 5


@pytest.mark.parametrize("seed", [1, 2])
def test_the_gate_shows_the_engines_candidates_on_generated_memories(
    memory_repo: MemoryRepo, seed: int
) -> None:
    tasks = _generated_memory(memory_repo, seed)
    tasks += _apart_episodes(memory_repo, seed)
    rules, episodes = _agree(memory_repo, tasks, RecallSettings())
    assert rules >= 20 and episodes >= 20, (rules, episodes)
    rules, episodes = _agree(memory_repo, tasks, RecallSettings(act_threshold=0.5, floor=0.4))
    assert rules >= 20 and episodes >= 20, (rules, episodes)


def test_a_redacted_episode_is_no_candidate_in_either(memory_repo: MemoryRepo) -> None:
    from scarwarden.files.redact import redact

    tasks = _apart_episodes(memory_repo, 5)
    with open_index(memory_repo) as index:
        first = recall(index, tasks[0], settings=RecallSettings()).candidates
    assert first and first[0].kind == "episode"
    redact(memory_repo, first[0].id, reason="held a secret")
    with open_index(memory_repo) as index:
        after = recall(index, tasks[0], settings=RecallSettings()).candidates
    assert first[0].id not in [c.id for c in after]
    _agree(memory_repo, tasks, RecallSettings())
