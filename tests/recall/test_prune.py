"""Recall's pruned first pass (recall/prune.py, over the packed postings of schema 20)
picks exactly what the exhaustive statement would: same candidates, same scores, same
order, so recall's results never depend on which path ran (issues 13 and 30)."""

from __future__ import annotations

import dataclasses
import json
import random
import sqlite3
import sys

import pytest
from conftest import git
from helpers import write_episode

from scarwarden import records, text
from scarwarden.config import RecallSettings
from scarwarden.files import playbook as pb
from scarwarden.index import open_index
from scarwarden.index.packed_postings import unpack_ints
from scarwarden.recall import citing, dense, engine, prune
from scarwarden.recall.candidates import candidates
from scarwarden.recall.engine import recall
from scarwarden.recall.explain import explain_data
from scarwarden.recall.score import task_terms, worth_explaining
from scarwarden.repo import MemoryRepo

# A small vocabulary with a steep spread: common words in hundreds of rules, so the
# pruning has common stems to skip, and many rules tie exactly.
WORDS = [f"w{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(120)]
WEIGHTS = [1.0 / (rank + 3) for rank in range(len(WORDS))]
TAGS = ["alpha", "beta", "gamma-delta", "delta", "beta-alpha", "omega"]


def _memory(repo: MemoryRepo, seed: int, rules: int = 400) -> list[str]:
    """A generated playbook (some rules say a word twice, some retired, many cite
    episodes whose words recall also reads) and the ledger; returns tasks to recall."""
    rng = random.Random(seed)
    episodes = []
    for k in range(60):
        ep = f"ep-gen{k:04d}"
        words = rng.choices(WORDS, weights=WEIGHTS, k=6)
        write_episode(repo, ep, task=" ".join(words), correction=" ".join(rng.choices(WORDS, k=4)))
        episodes.append(ep)
    active, retired = [], []
    for i in range(1, rules + 1):
        body = rng.choices(WORDS, weights=WEIGHTS, k=rng.randint(3, 14))
        if i % 7 == 0:
            body += body[:2]  # tf 2: the repeated postings
        rule = pb.make_rule(
            f"PB-{i:03d}",
            " ".join(body[:3]).capitalize(),
            " ".join(body[3:] or body).capitalize() + ".",
            rng.sample(TAGS, rng.randint(0, 2)),
            rng.sample(episodes, rng.randint(1, 2)),
        )
        if i % 5 == 0:  # duplicates: exact ties broken by rule ID
            prev = active[-1]
            rule = pb.make_rule(rule.id, prev.title, prev.text, list(prev.tags), list(prev.episode_ids))
        (retired if i % 11 == 0 else active).append(rule)
    retired = [dataclasses.replace(r, retired=True, reason="superseded") for r in retired]
    repo.playbook_path.write_text(pb.render(pb.Playbook(rules=tuple(active), retired=tuple(retired))))
    git(repo.root, "add", "-A")
    git(repo.root, "commit", "-q", "--no-verify", "-m", "generated memory")
    tasks = [" ".join(rng.choices(WORDS, weights=WEIGHTS, k=rng.randint(2, 12))) for _ in range(60)]
    tasks += [" ".join(rng.sample(WORDS[:8], 5)) + " gamma delta beta", "alpha", "omega beta alpha"]
    return tasks


@pytest.fixture(autouse=True, params=["maxscore", "numpy"])
def first_pass(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test runs on both first passes: pure-Python MaxScore and numpy's vectors
    (recall/dense.py, a large playbook's). Pruning runs whatever the task: these
    memories are small, and on a small memory the exhaustive statement runs for most."""
    monkeypatch.setattr(prune, "MIN_POSTINGS", 0)
    monkeypatch.setattr(prune, "MIN_COMMON", 0)
    monkeypatch.setattr(dense, "MIN_RULES", 0 if request.param == "numpy" else 10**9)
    monkeypatch.setattr(dense, "CITATIONS", dense.Citations())
    return str(request.param)


def _runs(memory_repo: MemoryRepo, tasks: list[str], key: tuple[str, str] | None) -> tuple[int, int]:
    """(tasks x limits whose pruned candidates differ from the exhaustive ones, how
    many of them the pruning narrowed)."""
    with open_index(memory_repo) as index:
        conn = index.conn
        n, total = int(index.meta("rule_count") or 0), int(index.meta("rule_total_length") or 0)
        count_tasks = int(index.meta("task_count") or 0)
        wrong = pruned = 0
        for task in tasks:
            terms = task_terms(conn, text.stems(task), n, total / n, count_tasks, True)
            for limit in (1, 3, 10):
                full = candidates(conn, terms, limit + 10)
                fast = prune.best_candidates(conn, terms, limit, limit + 10, cache_key=key)
                expected = worth_explaining(full, limit)
                # The same rules with the same scores, bit for bit, in the same order.
                same = [x for x in fast if x[0] in expected] == [x for x in full if x[0] in expected]
                wrong += not (same and worth_explaining(fast, limit) == expected)
                pruned += len(fast) < len(full)
        return wrong, pruned


@pytest.mark.parametrize("seed", [1, 2])
def test_pruned_candidates_are_the_exhaustive_ones(memory_repo: MemoryRepo, seed: int) -> None:
    tasks = _memory(memory_repo, seed)
    wrong, pruned = _runs(memory_repo, tasks, None)
    assert wrong == 0
    assert pruned, "the generated memory never exercised the pruning"
    # the second time round, the episodes' citing rules come from the process's cache
    key = (str(memory_repo.index_path), str(seed))
    assert _runs(memory_repo, tasks, key) == (0, pruned) == _runs(memory_repo, tasks, key)


def test_with_limit_equal_to_count_the_rules_and_their_order_are_the_statements(
    memory_repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Version 6 asks for the ``count`` best with ``limit == count``: the same rules in
    the same order as the exhaustive statement, their scores its own but for rounding
    (this pass's sums, unless a near tie at the cut sends those near it to the
    statement, for the places the rules clearly above it leave)."""
    tasks = _memory(memory_repo, 7)
    narrowed: list[tuple[int, int]] = []  # (places asked for, places left to the statement)
    asked = [0]
    real = prune.candidates

    def ranked_near_the_cut(conn: object, terms: object, count: int, **kw: object) -> object:
        if kw.get("only") is not None:
            narrowed.append((asked[0], count))
        return real(conn, terms, count, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(prune, "candidates", ranked_near_the_cut)
    with open_index(memory_repo) as index:
        conn = index.conn
        n, total = int(index.meta("rule_count") or 0), int(index.meta("rule_total_length") or 0)
        count_tasks = int(index.meta("task_count") or 0)
        own = 0
        for task in tasks:
            terms = task_terms(conn, text.stems(task), n, total / n, count_tasks, True)
            for count in (1, 5, 20):
                full = candidates(conn, terms, count)
                asked[0] = count
                fast = prune.best_candidates(conn, terms, count, count)
                assert [r for r, _ in fast] == [r for r, _ in full], (task, count)
                assert all(
                    abs(a - b) <= 1e-9 * max(1.0, b) for (_, a), (_, b) in zip(fast, full, strict=True)
                )
                own += fast != full
        assert own, "no sum differed from the statement's in its last bits: the pass's own were never used"
        assert any(left < count for count, left in narrowed), "no rule sure of its place at a near tie"


def test_a_wrong_first_pass_is_caught(
    memory_repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch, first_pass: str
) -> None:
    """The comparison above can fail: with every source's bound cut to a twentieth
    (MaxScore), or the episode words weighed a thousandth (numpy), rules that belong in
    the result are left out."""
    tasks = _memory(memory_repo, 6)
    if first_pass == "numpy":
        monkeypatch.setattr(dense, "K1", 1500.0)
    else:
        real_sources = prune._Reader.sources

        def low(self: prune._Reader) -> list[prune._Source]:
            return [records.replace(s, bound=s.bound * 0.05) for s in real_sources(self)]

        monkeypatch.setattr(prune._Reader, "sources", low)
    assert _runs(memory_repo, tasks, None)[0] > 0


def test_recall_is_byte_identical_whichever_path_runs(
    memory_repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    tasks = _memory(memory_repo, 3, rules=250)
    settings = RecallSettings(floor=0.0, act_threshold=0.1)

    def run() -> list[str]:
        with open_index(memory_repo) as index:
            out = []
            for task in tasks:
                result = recall(index, task, limit=5, settings=settings)
                out.append(json.dumps([result.to_json(), explain_data(result)], sort_keys=True))
            return out

    pruned = run()
    assert run() == pruned  # with the citing rules cached
    monkeypatch.setattr(
        engine, "best_candidates", lambda conn, task, limit, count, **_: candidates(conn, task, count)
    )
    assert run() == pruned


def test_the_citing_rules_kept_are_forgotten_when_the_playbook_moves(memory_repo: MemoryRepo) -> None:
    _memory(memory_repo, 4, rules=120)
    cache = citing.Citing()
    key = (str(memory_repo.index_path), "blob")
    with open_index(memory_repo) as index:
        view = cache.view(index.conn, key)
        episode, rules = index.conn.execute("SELECT ord, rules FROM episode_ords LIMIT 1").fetchone()
        assert list(view.of([episode])[episode]) == list(unpack_ints(rules)) != []
        assert episode in cache.view(index.conn, key).known  # kept for the next recall
    book = pb.parse(memory_repo.playbook_path.read_text())
    memory_repo.playbook_path.write_text(pb.render(dataclasses.replace(book, rules=book.rules[1:])))
    with open_index(memory_repo) as index:
        assert cache.view(index.conn, key).known == {}  # the stamp moved: read again


def test_the_pass_reads_one_state_of_the_index(
    memory_repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A refresh by another process cannot commit while a pass reads (ordinals must mean
    one rule from its first statement to its last); it can once the pass is done."""
    tasks = _memory(memory_repo, 8)
    real = prune._Reader.rule_names
    outcomes: list[str] = []

    def write_meanwhile(self: prune._Reader, ords: object) -> dict[int, str]:
        other = sqlite3.connect(memory_repo.index_path, timeout=0.05)
        try:
            other.execute("UPDATE meta SET value = value WHERE key = 'packed_stamp'")
            other.commit()
            outcomes.append("committed")
        except sqlite3.OperationalError as exc:
            outcomes.append(str(exc))
        finally:
            other.close()
        return real(self, ords)  # type: ignore[arg-type]

    monkeypatch.setattr(prune._Reader, "rule_names", write_meanwhile)
    with open_index(memory_repo) as index:
        conn = index.conn
        n, total = int(index.meta("rule_count") or 0), int(index.meta("rule_total_length") or 0)
        terms = task_terms(conn, text.stems(tasks[0]), n, total / n, int(index.meta("task_count") or 0), True)
        prune.best_candidates(conn, terms, 3, 13)
        assert outcomes == ["database is locked"]
        assert not conn.in_transaction
        other = sqlite3.connect(memory_repo.index_path, timeout=0.05)
        other.execute("UPDATE meta SET value = value WHERE key = 'packed_stamp'")
        other.commit()
        other.close()


def test_without_numpy_a_large_playbook_takes_the_pure_python_pass(
    memory_repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """numpy is optional: when it does not import, the same candidates come from MaxScore."""
    tasks = _memory(memory_repo, 9)
    monkeypatch.setattr(dense, "MIN_RULES", 0)
    monkeypatch.setattr(dense, "_HAVE", None)
    monkeypatch.setitem(sys.modules, "numpy", None)  # import numpy raises ImportError
    wrong, pruned = _runs(memory_repo, tasks, None)
    assert dense._HAVE is False
    assert wrong == 0 and pruned


def test_a_pass_cut_short_leaves_no_sum_for_the_next(
    memory_repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch, first_pass: str
) -> None:
    """numpy's pass keeps its score vectors between recalls, zeroed by each pass: one
    stopped midway (an error, an interrupt) must not leave its sums to the next."""
    if first_pass != "numpy":
        pytest.skip("the vectors are numpy's pass's")
    tasks = _memory(memory_repo, 10)
    real = dense._entry
    calls = [0]

    def fails_on_the_third_entry(np: object, entry: tuple[bytes, bytes]) -> object:
        calls[0] += 1
        if calls[0] == 3:
            raise KeyboardInterrupt
        return real(np, entry)

    with open_index(memory_repo) as index:
        conn = index.conn
        n, total = int(index.meta("rule_count") or 0), int(index.meta("rule_total_length") or 0)
        terms = task_terms(conn, text.stems(tasks[0]), n, total / n, int(index.meta("task_count") or 0), True)
        assert len(terms.df) >= 3

        def sums() -> dict[int, float]:
            return dense.survivors(prune._Reader(conn, terms, None), 10**6, None)  # every rule's sum

        expected = sums()
        assert expected and sums() == expected  # a pass that ends leaves nothing behind
        monkeypatch.setattr(dense, "_entry", fails_on_the_third_entry)
        with pytest.raises(KeyboardInterrupt):
            sums()
        monkeypatch.setattr(dense, "_entry", real)
        assert sums() == expected
