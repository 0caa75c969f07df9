"""The packed postings (index/packed_postings.py, schema 20) say what the row tables
say, after a build and after every kind of refresh, and a refresh leaves what a
rebuild writes (issue 30: recall's first pass reads them alone)."""

from __future__ import annotations

import dataclasses
import random
import sqlite3
from collections import defaultdict

import pytest
from conftest import git
from helpers import write_episode
from index_tables import packed_tables

from scarwarden.files import playbook as pb
from scarwarden.index import open_index
from scarwarden.index.packed_postings import decode, encode, pack_ints, unpack_ints
from scarwarden.repo import MemoryRepo

WORDS = [f"w{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(60)]
TAGS = ["alpha", "beta", "gamma-delta", "delta", "beta-alpha", "the"]


def _truth(conn: sqlite3.Connection) -> dict[str, object]:
    """What the entries must hold, read from the row tables by ID."""
    entries: dict[str, list[tuple[str, tuple[int, int]]]] = defaultdict(list)
    for term, rule_id, tf, length in conn.execute("SELECT term, rule_id, tf, length FROM rule_terms"):
        entries[f"t:{term}"].append((rule_id, (tf, length)))
    for tag, rule_id in conn.execute("SELECT DISTINCT tag, rule_id FROM rule_tag_stems"):
        entries[f"g:{tag}"].append((rule_id, (0, 0)))
    etf: dict[tuple[str, str], int] = defaultdict(int)
    for term, episode_id, _field, tf in conn.execute(
        "SELECT term, episode_id, field, max(tf) FROM rule_episode_terms GROUP BY term, episode_id, field"
    ):
        etf[(term, episode_id)] += tf
    for (term, episode_id), count in etf.items():
        entries[f"e:{term}"].append((episode_id, (count, 0)))
    active = [r for (r,) in conn.execute("SELECT id FROM rules WHERE retired = 0")]
    cited: dict[str, set[str]] = {r: set() for r in active}
    citing: dict[str, set[str]] = defaultdict(set)
    for rule_id, episode_id in conn.execute("SELECT DISTINCT rule_id, episode_id FROM rule_episode_terms"):
        cited[rule_id].add(episode_id)
        citing[episode_id].add(rule_id)
    return {
        "entries": {key: sorted(value) for key, value in entries.items()},
        "rule_episodes": sorted((r, sorted(e)) for r, e in cited.items()),
        "episode_rules": sorted((e, sorted(r)) for e, r in citing.items()),
        "tag_stems": sorted(conn.execute("SELECT DISTINCT stem, tag, parts FROM rule_tag_stems")),
    }


def _state(repo: MemoryRepo) -> dict[str, object]:
    with open_index(repo) as index:
        packed = packed_tables(index.conn)
        assert packed == _truth(index.conn)
        return packed


def _write(repo: MemoryRepo, active: list[pb.Rule], retired: list[pb.Rule]) -> None:
    repo.playbook_path.write_text(pb.render(pb.Playbook(rules=tuple(active), retired=tuple(retired))))


def _memory(repo: MemoryRepo, seed: int) -> tuple[list[pb.Rule], list[str]]:
    rng = random.Random(seed)
    episodes = []
    for k in range(30):
        ep = f"ep-pk{k:04d}"
        words = rng.choices(WORDS, k=5)
        write_episode(repo, ep, task=" ".join(words), correction=" ".join(rng.choices(WORDS, k=3)))
        episodes.append(ep)
    rules = []
    for i in range(1, 61):
        body = rng.choices(WORDS, k=rng.randint(3, 10))
        rules.append(
            pb.make_rule(
                f"PB-{i:03d}",
                " ".join(body[:2]).capitalize(),
                " ".join(body + body[:1]).capitalize() + ".",
                rng.sample(TAGS, rng.randint(0, 2)),
                rng.sample(episodes, rng.randint(1, 3)),
            )
        )
    _write(repo, rules, [])
    git(repo.root, "add", "-A")
    git(repo.root, "commit", "-q", "--no-verify", "-m", "generated memory")
    return rules, episodes


def _rebuilt(repo: MemoryRepo) -> dict[str, object]:
    repo.index_path.unlink()
    return _state(repo)


@pytest.mark.parametrize("seed", [1, 2])
def test_a_refresh_leaves_the_entries_a_rebuild_writes(memory_repo: MemoryRepo, seed: int) -> None:
    rng = random.Random(seed)
    rules, episodes = _memory(memory_repo, seed)
    built = _state(memory_repo)
    assert any(k.startswith("e:") for k in built["entries"])  # type: ignore[attr-defined]
    # a rule's words, tags and citations change; one goes; one is retired; one is new
    rules[0] = dataclasses.replace(rules[0], text="Wzz waa waa wab.", tags=("omega", "beta"))
    rules[1] = dataclasses.replace(rules[1], episode_ids=(episodes[0], "ep-pk9999"))
    gone = rules.pop(2)
    retired = [dataclasses.replace(rules.pop(3), retired=True, reason="superseded")]
    rules.append(pb.make_rule("PB-200", "Waa wzz", "Wzz wzy.", ["alpha"], [episodes[5], episodes[6]]))
    _write(memory_repo, rules, retired)
    after = _state(memory_repo)
    assert after != built
    assert not any(gone.id == r for r, _ in after["rule_episodes"])  # type: ignore[attr-defined]
    assert after == _rebuilt(memory_repo)
    # a cited episode that did not exist arrives; another is redacted to new words
    write_episode(memory_repo, "ep-pk9999", task="Wqq wqr arrives", correction="wqq")
    path = next(memory_repo.episodes_dir.rglob(f"{episodes[5]}.yaml"))
    saved = path.with_suffix(".tmp")  # saved as editors save, by rename (an edit in place is
    saved.write_text(path.read_text().replace("task: ", "task: wnew ", 1))  # docs/formats.md's miss)
    saved.replace(path)
    arrived = _state(memory_repo)
    assert {"e:wqq", "e:wnew"} <= set(arrived["entries"])  # type: ignore[call-overload]
    assert arrived == _rebuilt(memory_repo)
    # every rule goes but one, then they come back in another order
    _write(memory_repo, rules[:1], [])
    assert _state(memory_repo) == _rebuilt(memory_repo)
    rng.shuffle(rules)
    _write(memory_repo, rules, retired)
    assert _state(memory_repo) == _rebuilt(memory_repo)


def test_an_episode_whose_citing_rules_all_go_leaves_every_entry(memory_repo: MemoryRepo) -> None:
    write_episode(memory_repo, "ep-only00001", task="Wonly wsolo", correction="wsolo")
    write_episode(memory_repo, "ep-both00001", task="Wshared wsolo")
    one = pb.make_rule("PB-001", "First", "Waa.", [], ["ep-only00001", "ep-both00001"])
    two = pb.make_rule("PB-002", "Second", "Wab.", [], ["ep-both00001"])
    _write(memory_repo, [one, two], [])
    before = _state(memory_repo)
    assert ("ep-only00001", (2, 0)) in before["entries"]["e:wsolo"]  # type: ignore[index]
    _write(memory_repo, [two], [])
    after = _state(memory_repo)
    assert after["entries"]["e:wsolo"] == [("ep-both00001", (1, 0))]  # type: ignore[index]
    assert "e:wonli" not in after["entries"]  # type: ignore[operator]
    assert after["episode_rules"] == [("ep-both00001", ["PB-002"])]
    assert after == _rebuilt(memory_repo)


def test_entries_round_trip() -> None:
    postings = {7: (1, 12), 3: (1, 12), 9: (2, 5), 0: (1, 4)}
    ords, runs = encode(postings)
    values, decoded = decode(ords, runs)
    assert list(values) == [0, 3, 7, 9]  # runs in (tf, length) order, ordinals ascending
    assert decoded == [(0, 1, 1, 4), (1, 3, 1, 12), (3, 4, 2, 5)]
    assert pack_ints([1, 256]) == b"\x01\x00\x00\x00\x00\x01\x00\x00"  # little-endian int32
    assert list(unpack_ints(None)) == []
