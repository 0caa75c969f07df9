"""Recall's pruned first pass (recall/prune.py) picks exactly what the exhaustive
statement would: same candidates, same scores, same order, so recall's results never
depend on which path ran (issue 13, recall at 100k rules)."""

from __future__ import annotations

import dataclasses
import json
import random

import pytest
from conftest import git
from helpers import write_episode

from scarwarden import text
from scarwarden.config import RecallSettings
from scarwarden.files import playbook as pb
from scarwarden.index import open_index
from scarwarden.recall import prune
from scarwarden.recall.candidates import candidates
from scarwarden.recall.engine import recall
from scarwarden.recall.explain import explain_data
from scarwarden.recall.postings_cache import PostingsCache
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


@pytest.mark.parametrize("seed", [1, 2])
def test_pruned_candidates_are_the_exhaustive_ones(memory_repo: MemoryRepo, seed: int) -> None:
    tasks = _memory(memory_repo, seed)
    cache = PostingsCache(budget=100_000, min_cached=1)
    with open_index(memory_repo) as index:
        conn = index.conn
        n, total = int(index.meta("rule_count") or 0), int(index.meta("rule_total_length") or 0)
        count_tasks = int(index.meta("task_count") or 0)
        pruned_some = 0
        for task in tasks * 2:  # the second time round, common stems come from the cache
            terms = task_terms(conn, text.stems(task), n, total / n, count_tasks, True)
            for limit in (1, 3, 10):
                full = candidates(conn, terms, limit + 10)
                fast = prune.best_candidates(
                    conn, terms, limit, limit + 10, cache_key=("test", str(seed)), min_postings=0, cache=cache
                )
                expected = worth_explaining(full, limit)
                assert worth_explaining(fast, limit) == expected, (task, limit)
                # The same rules with the same scores, bit for bit, in the same order.
                assert [x for x in fast if x[0] in expected] == [x for x in full if x[0] in expected]
                pruned_some += len(fast) < len(full)
        assert pruned_some, "the generated memory never exercised the pruning"
        assert cache.size > 0, "nothing was served from the postings cache"


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

    exhaustive = run()
    monkeypatch.setattr(prune, "MIN_POSTINGS", 0)
    assert run() == exhaustive
    assert run() == exhaustive  # with the postings cache warm


def test_the_cache_forgets_a_changed_playbook(memory_repo: MemoryRepo) -> None:
    _memory(memory_repo, 4, rules=120)
    cache = PostingsCache(budget=100_000, min_cached=1)
    with open_index(memory_repo) as index:
        stem = index.conn.execute("SELECT term FROM rule_term_df ORDER BY df DESC LIMIT 1").fetchone()[0]
        assert cache.get(index.conn, ("i", "blob-1"), stem, 10_000) is None  # first time: read from SQLite
        first = cache.get(index.conn, ("i", "blob-1"), stem, 10_000)
        assert first and cache.size == len(first)
        assert cache.get(index.conn, ("i", "blob-2"), stem, 10_000) is None
        assert cache.size == 0


def test_the_bounds_stay_exact_after_an_incremental_refresh(memory_repo: MemoryRepo) -> None:
    """A bound below what a posting adds would prune a rule that belongs in the result:
    ``min_length1`` after a refresh must be what a rebuild computes."""
    _memory(memory_repo, 5, rules=80)

    def table() -> list[tuple[str, int, int | None]]:
        with open_index(memory_repo) as index:
            rows = index.conn.execute("SELECT term, df, min_length1 FROM rule_term_df ORDER BY term")
            return rows.fetchall()

    before = table()
    book = pb.parse(memory_repo.playbook_path.read_text())
    shortest = min(book.rules, key=lambda r: len(text.stems(r.title + " " + r.text)))
    rules = [r for r in book.rules if r.id != shortest.id]  # the shortest rule goes
    rules[0] = dataclasses.replace(rules[0], title="Waa", text="Waa wab.")  # a new shortest
    retired = (dataclasses.replace(rules.pop(1), retired=True, reason="superseded"), *book.retired)
    memory_repo.playbook_path.write_text(pb.render(pb.Playbook(rules=tuple(rules), retired=retired)))
    refreshed = table()
    assert refreshed != before
    memory_repo.index_path.unlink()
    assert table() == refreshed


def _true_caps(conn: object) -> dict[str, int]:
    """The most one cited episode says each stem (task + correction), counted here from
    ``rule_episode_terms``: what ``rule_episode_df.max_etf`` must hold."""
    return dict(
        conn.execute(  # type: ignore[attr-defined]
            "SELECT term, max(etf) FROM (SELECT term, rule_id, episode_id, sum(tf) AS etf "
            "FROM rule_episode_terms GROUP BY term, rule_id, episode_id) GROUP BY term"
        ).fetchall()
    )


def test_the_episode_words_bound_uses_the_most_an_episode_says_a_stem(
    memory_repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``max_etf`` in the index an episode stem adds at most ``w x m / (m + K1)``
    (not ``w``): fewer episode lists are read, and the candidates are still the
    exhaustive ones (a cap below the truth would not be: checked too)."""
    tasks = _memory(memory_repo, 6)
    read: list[str] = []
    real_add = prune._Reader._add_episode

    def counting(self: prune._Reader, acc: dict[str, float], stem: str, existing: bool) -> None:
        if not existing:  # read in full, not only for the rules that can still make it
            read.append(stem)
        real_add(self, acc, stem, existing)

    monkeypatch.setattr(prune._Reader, "_add_episode", counting)
    with open_index(memory_repo) as index:
        conn = index.conn
        n, total = int(index.meta("rule_count") or 0), int(index.meta("rule_total_length") or 0)
        count_tasks = int(index.meta("task_count") or 0)
        terms = [task_terms(conn, text.stems(task), n, total / n, count_tasks, True) for task in tasks]

        def run() -> tuple[int, int]:
            """(tasks x limits whose pruned candidates differ, episode lists read in full)."""
            read.clear()
            wrong = 0
            for these in terms:
                for limit in (1, 3, 10):
                    full = candidates(conn, these, limit + 10)
                    fast = prune.best_candidates(conn, these, limit, limit + 10, min_postings=0)
                    expected = worth_explaining(full, limit)
                    same = [x for x in fast if x[0] in expected] == [x for x in full if x[0] in expected]
                    wrong += not (same and worth_explaining(fast, limit) == expected)
            return wrong, len(read)

        caps = _true_caps(conn)
        assert set(caps.values()) >= {1, 2}, "the generated ledger says some stem twice in one episode"
        assert prune._etf_caps(conn, sorted(terms[0].ep_df)) == {t: caps[t] for t in terms[0].ep_df}
        wrong, capped = run()
        assert wrong == 0
        conn.execute("UPDATE rule_episode_df SET max_etf = NULL")  # an index that does not say
        assert not any(prune._etf_caps(conn, sorted(t.ep_df)) for t in terms), "no value: no cap"
        wrong, uncapped = run()
        assert wrong == 0
        assert capped < uncapped, "the cap spared no episode list a full read"
        monkeypatch.setattr(prune, "_saturation", lambda cap: 0.05)  # a bound below the truth
        assert run()[0] > 0, "these tasks cannot tell a wrong bound from a right one"
