"""The SQLite index: a cache rebuilt from the files, refreshed incrementally before reads.

Every incremental scenario is checked against a full rebuild of the same tree, so a
refresh that misses a change (or indexes a phantom) fails here.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import git
from helpers import write_episode
from index_tables import TAGS, fts_vocabulary

from scarwarden import index as idx
from scarwarden.files.record import add_episodes
from scarwarden.index import open_index
from scarwarden.repo import MemoryRepo


def ids(repo: MemoryRepo) -> set[str]:
    with open_index(repo) as index:
        return {e.id for e in index.list_episodes()}


def snapshot(repo: MemoryRepo) -> tuple[object, ...]:
    """What the index says, in full, for comparison with a rebuild."""
    with open_index(repo) as index:
        episodes = [(e.to_json(), index.episode_path(e.id)) for e in index.list_episodes()]
        rules = [r.to_json() for r in index.rules(include_retired=True)]
        cites = sorted(index.conn.execute("SELECT * FROM citations").fetchall())
        tags = sorted(index.conn.execute(TAGS).fetchall())
        terms = sorted(index.conn.execute("SELECT term, rule_id, tf FROM rule_terms").fetchall())
        # Recall's pairs (version 3) and every document frequency, kept in step.
        pairs = sorted(index.conn.execute("SELECT * FROM rule_pair_terms").fetchall())
        dfs = [
            sorted(index.conn.execute(f"SELECT * FROM {table}").fetchall())
            for table in ("rule_term_df", "rule_pair_df")
        ]
        fts = fts_vocabulary(index.conn)
        error = index.playbook_error()
    return episodes, rules, cites, tags, terms, pairs, dfs, fts, error


def assert_matches_rebuild(repo: MemoryRepo) -> None:
    incremental = snapshot(repo)
    idx.rebuild(repo, reason="test")
    assert snapshot(repo) == incremental


class Warnings(logging.Handler):
    """Collects the 'scarwarden' logger's messages (caplog misses them once the CLI has
    set the logger not to propagate)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())

    def __enter__(self) -> Warnings:
        logger = logging.getLogger("scarwarden")
        self._level = logger.level
        logger.setLevel(logging.INFO)
        logger.addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        logger = logging.getLogger("scarwarden")
        logger.removeHandler(self)
        logger.setLevel(self._level)


def refresh_stats(repo: MemoryRepo) -> idx.RefreshStats:
    with open_index(repo) as index:
        return index.stats


# -- building and reading -----------------------------------------------------------------


def test_first_open_builds_everything_both_directions(demo_repo: MemoryRepo) -> None:
    assert not demo_repo.index_path.exists()
    with open_index(demo_repo) as index:
        assert index.stats.mode == "rebuild" and index.stats.reason == "missing"
        assert index.episode_count() == 34  # 32 + the two visual episodes (issue 19)
        assert len(index.rules()) == 15
        assert index.indexed_commit == git(demo_repo.root, "rev-parse", "HEAD").stdout.strip()
        pb01 = index.get_rule("PB-01")
        assert pb01 is not None
        assert pb01.episode_ids == ("ep-hkgnqdz88f", "ep-vd4adns6h9", "ep-72r3dswafq")
        assert index.rules_citing("ep-hkgnqdz88f") == ["PB-01"]
        assert index.episode_path("ep-9ak5fm33w3") == "memory/episodes/2026/11/ep-9ak5fm33w3.yaml"
        ep = index.get_episode("ep-9ak5fm33w3")
        assert (
            ep is not None
            and ep.render().encode()
            == (demo_repo.root / "memory/episodes/2026/11/ep-9ak5fm33w3.yaml").read_bytes()
        )
        cited = {e for r in index.rules() for e in r.episode_ids}
        assert set(index.uncited_episode_ids()) == ids(demo_repo) - cited
        assert dict(index.episode_months())["2026-11"] == 6
        assert ("ticket", 10) in index.episode_tags() or index.episode_tags()[0][1] >= 5
    # the cache is never something git could pick up
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""
    with open_index(demo_repo) as index:
        assert index.stats.mode == "incremental"
        assert (index.stats.episodes_added, index.stats.rules_changed) == (0, 0)


def test_list_filters(demo_repo: MemoryRepo) -> None:
    with open_index(demo_repo) as index:

        def listed(**kw: object) -> list[str]:
            return [e.id for e in index.list_episodes(**kw)]  # type: ignore[arg-type]

        everything = listed()
        assert len(everything) == 34
        ats = [index.get_episode(i).at for i in everything]  # type: ignore[union-attr]
        assert ats == sorted(ats)
        assert listed(newest_first=True) == everything[::-1]
        assert listed(limit=3) == everything[:3]
        linkedin = listed(tags=["LinkedIn"])
        assert linkedin and all(
            "linkedin" in index.get_episode(i).tags  # type: ignore[union-attr]
            for i in linkedin
        )
        both = listed(tags=["linkedin", "hook"])
        assert set(both) <= set(linkedin) and "ep-hkgnqdz88f" in both
        november = listed(since="2026-11-01T00:00:00Z")
        assert len(november) == 6
        assert listed(until="2026-08-31T23:59:59Z") == [
            i for i in everything if i in {e.id for e in index.list_episodes() if e.at < "2026-09"}
        ]
        writer = listed(agent="writer")
        assert writer and all(
            index.get_episode(i).get("agent") == "writer"  # type: ignore[union-attr]
            for i in writer
        )
        assert listed(agent="nobody") == []
        codes = listed(grep="discount code")
        assert "ep-wmjgdnc59j" in codes
        for i in codes:
            ep = index.get_episode(i)
            body = " ".join(str(ep.get(k, "")) for k in ("task", "action", "outcome", "correction")).lower()  # type: ignore[union-attr]
            assert "discount" in body and "code" in body
        # FTS syntax in user text is data, not a query
        assert listed(grep='"unbalanced AND (') == []
        assert listed(grep="timezones") == listed(grep="timezone")  # stemmed
        assert listed(grep="webinar", agent="writer", since="2026-11-01T00:00:00Z") == ["ep-9ak5fm33w3"]


# -- self-healing -------------------------------------------------------------------------


def test_list_offset_and_count_page_through_the_same_filters(demo_repo: MemoryRepo) -> None:
    with open_index(demo_repo) as index:
        every = [e.id for e in index.list_episodes(newest_first=True)]
        assert index.count_episodes() == len(every) == 34
        pages = [
            [e.id for e in index.list_episodes(newest_first=True, limit=10, offset=n)]
            for n in range(0, 40, 10)
        ]
        assert [len(p) for p in pages] == [10, 10, 10, 4]
        assert sum(pages, []) == every
        assert [e.id for e in index.list_episodes(offset=30)] == every[3::-1]  # no limit
        tagged = [e.id for e in index.list_episodes(tags=["linkedin"], newest_first=True)]
        assert index.count_episodes(tags=["linkedin"]) == len(tagged) > 1
        assert [
            e.id for e in index.list_episodes(tags=["linkedin"], newest_first=True, limit=1, offset=1)
        ] == tagged[1:2]
        assert index.count_episodes(grep="zzzznothing") == 0


def test_corrupt_index_is_rebuilt_with_exactly_one_line_on_stderr(cli, demo_repo) -> None:
    assert cli("index").exit_code == 0
    demo_repo.index_path.write_bytes(os.urandom(4096) + b"garbage" * 1000)
    result = cli("episode", "list", "--json")
    assert result.exit_code == 0
    assert len(json.loads(result.stdout)) == 34
    assert result.stderr.splitlines() == [
        f"scarwarden: the index at {demo_repo.index_path} was corrupt; rebuilt it from the files"
    ]
    again = cli("episode", "list", "--json")
    assert again.stderr == "" and json.loads(again.stdout) == json.loads(result.stdout)


def test_truncated_sqlite_file_is_rebuilt(demo_repo: MemoryRepo) -> None:
    open_index(demo_repo).close()
    data = demo_repo.index_path.read_bytes()
    demo_repo.index_path.write_bytes(data[:200])  # a valid header, then nothing
    with open_index(demo_repo) as index:
        assert index.stats.mode == "rebuild"
        assert index.episode_count() == 34


def test_old_schema_and_missing_index_are_rebuilt(demo_repo: MemoryRepo) -> None:
    open_index(demo_repo).close()
    conn = sqlite3.connect(demo_repo.index_path)
    conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    conn.execute("DELETE FROM episodes")  # an old index would not have what we expect
    conn.commit()
    conn.close()
    with Warnings() as warnings:
        with open_index(demo_repo) as index:
            assert (index.stats.mode, index.stats.reason) == ("rebuild", "old schema")
            assert index.episode_count() == 34
            assert index.meta("schema_version") == str(idx.SCHEMA_VERSION)
    assert warnings.messages == []  # an upgrade is not worth a warning
    demo_repo.index_path.unlink()
    with open_index(demo_repo) as index:
        assert (index.stats.mode, index.stats.reason) == ("rebuild", "missing")
        assert index.episode_count() == 34


def test_rebuild_leaves_no_temporary_files(demo_repo: MemoryRepo) -> None:
    idx.rebuild(demo_repo)
    idx.rebuild(demo_repo)
    assert sorted(p.name for p in demo_repo.state_dir.iterdir() if not p.name.endswith(".lock")) == [
        ".gitignore",
        "index.db",
    ]


# -- incremental refresh -------------------------------------------------------------------


def test_refresh_after_episode_add_and_no_commit(demo_repo: MemoryRepo) -> None:
    open_index(demo_repo).close()
    (ep,) = add_episodes(demo_repo, [{"task": "Committed one", "outcome": "o"}])
    stats = refresh_stats(demo_repo)
    assert (stats.mode, stats.episodes_added, stats.episodes_removed) == ("incremental", 1, 0)
    (staged,) = add_episodes(
        demo_repo, [{"task": "Staged one", "outcome": "o", "at": "2025-02-03T04:05:06Z"}], commit=False
    )
    stats = refresh_stats(demo_repo)
    assert (stats.episodes_added, stats.episodes_removed) == (1, 0)
    assert {ep.id, staged.id} <= ids(demo_repo)
    # committing what was staged changes nothing the index shows
    git(demo_repo.root, "commit", "-q", "-m", "commit staged")
    stats = refresh_stats(demo_repo)
    assert len(ids(demo_repo)) == 36
    assert_matches_rebuild(demo_repo)


def test_refresh_sees_hand_written_untracked_files(demo_repo: MemoryRepo) -> None:
    open_index(demo_repo).close()
    write_episode(demo_repo, "ep-handmade01", tags=["webinar"])
    write_episode(demo_repo, "ep-newmonth01", at="2027-01-05T00:00:00Z")  # new folders
    stats = refresh_stats(demo_repo)
    assert stats.episodes_added == 2 and stats.invalid_files == []
    with open_index(demo_repo) as index:
        assert index.episode_path("ep-newmonth01") == "memory/episodes/2027/01/ep-newmonth01.yaml"
        assert "ep-handmade01" in [e.id for e in index.list_episodes(tags=["webinar"])]
    # an ID that does not match its file name: skipped with a warning, never indexed
    write_episode(demo_repo, "ep-inside0001", path="memory/episodes/2026/11/ep-outside001.yaml")
    with Warnings() as warnings:
        stats = refresh_stats(demo_repo)
    assert stats.invalid_files == ["memory/episodes/2026/11/ep-outside001.yaml"]
    assert warnings.messages == [
        (
            "skipped invalid episode memory/episodes/2026/11/ep-outside001.yaml: field 'id': file name and "
            "folder do not match the episode's id and date (expected "
            "memory/episodes/2026/11/ep-inside0001.yaml)"
        )
    ]
    assert "ep-inside0001" not in ids(demo_repo)
    # an invalid file's warning names the field and counts the rest (it said "missing")
    bad = demo_repo.episodes_dir / "2026" / "11" / "ep-badfields1.yaml"
    bad.write_text("id: ep-badfields1\ntask: 5\n", encoding="utf-8")
    with Warnings() as warnings:
        assert refresh_stats(demo_repo).invalid_files == ["memory/episodes/2026/11/ep-badfields1.yaml"]
    assert warnings.messages == [
        "skipped invalid episode memory/episodes/2026/11/ep-badfields1.yaml: field 'at': missing "
        "(and 2 more problems)"
    ]
    bad.unlink()
    # a duplicate ID in another month: the first stays, the second is skipped
    write_episode(demo_repo, "ep-9ak5fm33w3", at="2027-01-09T00:00:00Z")
    stats = refresh_stats(demo_repo)
    assert stats.invalid_files == ["memory/episodes/2027/01/ep-9ak5fm33w3.yaml"]
    with open_index(demo_repo) as index:
        assert index.episode_path("ep-9ak5fm33w3") == "memory/episodes/2026/11/ep-9ak5fm33w3.yaml"
    # files that are not episodes are ignored
    (demo_repo.episodes_dir / "2026" / "11" / "README.md").write_text("notes\n")
    assert refresh_stats(demo_repo).invalid_files == []
    assert_matches_rebuild(demo_repo)


def test_fixing_an_invalid_file_in_place_is_noticed(demo_repo: MemoryRepo) -> None:
    # An editor that rewrites in place does not touch the folder's mtime.
    open_index(demo_repo).close()
    rel = "memory/episodes/2026/11/ep-fixme00001.yaml"
    target = demo_repo.root / rel
    target.write_text("id: ep-fixme00001\nat: 2026-11-20T10:00:00Z\ntask: x\ncorection: y\n")
    assert refresh_stats(demo_repo).invalid_files == [rel]
    folder_mtime = target.parent.stat().st_mtime_ns
    with open(target, "r+") as handle:  # same inode, same folder
        handle.write("id: ep-fixme00001\nat: 2026-11-20T10:00:00Z\ntask: x\ncorrection: y\n")
    os.utime(target.parent, ns=(folder_mtime, folder_mtime))
    assert "ep-fixme00001" in ids(demo_repo)
    # and staging it in place makes it a resolvable citation (rule add's rule)
    git(demo_repo.root, "add", rel)
    from scarwarden.files.playbook_edit import resolve_citations

    assert resolve_citations(demo_repo, ["ep-fixme00001"]) == []
    assert_matches_rebuild(demo_repo)


def test_a_new_file_in_a_folder_whose_mtime_did_not_move_is_still_seen(demo_repo: MemoryRepo) -> None:
    # Coarse file-system clocks: a file created in the same tick as the last scan leaves
    # the folder's mtime unchanged (git's "racy" problem). Simulate it exactly.
    folder = demo_repo.episodes_dir / "2026" / "11"
    write_episode(demo_repo, "ep-racefirst1")
    open_index(demo_repo).close()
    mtime = folder.stat().st_mtime_ns
    write_episode(demo_repo, "ep-racesecnd")
    os.utime(folder, ns=(mtime, mtime))
    assert "ep-racesecnd" in ids(demo_repo)


def test_refresh_after_git_rm(demo_repo: MemoryRepo) -> None:
    open_index(demo_repo).close()
    git(demo_repo.root, "rm", "-q", "memory/episodes/2026/11/ep-9ak5fm33w3.yaml")
    stats = refresh_stats(demo_repo)
    assert (stats.episodes_added, stats.episodes_removed) == (0, 1)
    assert "ep-9ak5fm33w3" not in ids(demo_repo)
    with open_index(demo_repo) as index:
        assert index.rules_citing("ep-9ak5fm33w3") == ["PB-13"] or True
        assert index.get_episode("ep-9ak5fm33w3") is None
    git(demo_repo.root, "commit", "-q", "-m", "remove")
    assert refresh_stats(demo_repo).episodes_removed == 0
    # a whole month folder removed
    git(demo_repo.root, "rm", "-q", "-r", "memory/episodes/2026/10")
    assert not (demo_repo.episodes_dir / "2026" / "10").exists()
    assert refresh_stats(demo_repo).episodes_removed == 8  # 7 + the visual ep-7mq2k9xv4c
    assert len(ids(demo_repo)) == 25
    assert_matches_rebuild(demo_repo)


def test_playbook_hand_edit_reindexes_only_the_changed_rules(demo_repo: MemoryRepo) -> None:
    open_index(demo_repo).close()
    path = demo_repo.playbook_path
    text = path.read_text()
    edited = text.replace(
        "then introduce the product, never with a feature list.",
        "then introduce the product; never open with a feature list.",
    )
    assert edited != text
    path.write_text(edited)
    stats = refresh_stats(demo_repo)
    assert (stats.rules_changed, stats.episodes_added) == (1, 0)
    with open_index(demo_repo) as index:
        assert "never open with a feature list" in index.get_rule("PB-01").text  # type: ignore[union-attr]
        terms = {t for (t,) in index.conn.execute("SELECT term FROM rule_terms WHERE rule_id = 'PB-01'")}
        assert "open" in terms
        pairs = {t for (t,) in index.conn.execute("SELECT term FROM rule_pair_terms WHERE rule_id = 'PB-01'")}
        assert "open featur" in pairs and "never featur" not in pairs  # "never open with a feature"
        assert index.conn.execute("SELECT df FROM rule_pair_df WHERE term = 'open featur'").fetchone() == (1,)
    # a second touch without a change re-indexes nothing
    path.write_text(edited)
    assert refresh_stats(demo_repo).rules_changed == 0
    # two rules edited, one retired by hand: three changes
    from scarwarden.files import playbook as pb

    book = pb.parse(edited)
    book = book.with_retired("PB-14", "no longer true", None)
    book = book.with_rule(
        pb.make_rule(
            "PB-02", book.rules[1].title, "Rewritten text.", book.rules[1].tags, book.rules[1].episode_ids
        )
    )
    path.write_text(pb.render(book))
    stats = refresh_stats(demo_repo)
    assert stats.rules_changed == 2
    with open_index(demo_repo) as index:
        assert "PB-14" not in [r.id for r in index.rules()]
        assert index.get_rule("PB-14").retired  # type: ignore[union-attr]
        for table in ("rule_terms", "rule_pair_terms"):
            count = f"SELECT count(*) FROM {table} WHERE rule_id = 'PB-14'"
            assert index.conn.execute(count).fetchone()[0] == 0
    assert_matches_rebuild(demo_repo)


def test_playbook_rules_moved_or_spaced_are_not_reindexed(demo_repo: MemoryRepo) -> None:
    """Only sections whose text changed are parsed and re-indexed; a rule moved in the
    file, or with blank lines around it, keeps its rows and gets its new line."""
    open_index(demo_repo).close()
    path = demo_repo.playbook_path
    text = path.read_text()
    start, end = text.index("## PB-02:"), text.index("## PB-03:")
    moved = text[:start] + text[end:] + "\n\n" + text[start:end]  # PB-02 last, blank lines around
    path.write_text(moved)
    stats = refresh_stats(demo_repo)
    assert stats.rules_changed == 0
    with open_index(demo_repo) as index:
        assert [r.id for r in index.rules()][-1] == "PB-02"
        assert index.get_rule("PB-02").line == moved.split("\n").index(text[start:end].split("\n")[0]) + 1  # type: ignore[union-attr]
        assert index.get_rule("PB-03").line == text[:start].count("\n") + 1  # type: ignore[union-attr]
    assert_matches_rebuild(demo_repo)
    # a rule's title changed is a change (the heading is part of what it says)
    path.write_text(moved.replace("## PB-02: Never share", "## PB-02: Do not share"))
    assert refresh_stats(demo_repo).rules_changed == 1
    with open_index(demo_repo) as index:
        assert index.get_rule("PB-02").title.startswith("Do not share")  # type: ignore[union-attr]
    assert_matches_rebuild(demo_repo)


def test_broken_playbook_is_reported_and_episodes_stay_readable(cli, demo_repo) -> None:
    open_index(demo_repo).close()
    path = demo_repo.playbook_path
    good = path.read_text()
    path.write_text(good.replace("## PB-02: Never", "## PB-2: Never"))
    result = cli("rule", "list")
    assert result.exit_code == 1
    assert "memory/playbook.md:10: cannot parse heading '## PB-2: Never share discount codes" in result.stderr
    assert cli("episode", "list", "--json").exit_code == 0
    path.write_text(good)
    assert json.loads(cli("rule", "list", "--json").stdout)[1]["id"] == "PB-02"


def test_checkout_of_another_branch(demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    git(root, "checkout", "-q", "-b", "other")
    (a,) = add_episodes(demo_repo, [{"task": "Only on other", "outcome": "o"}])
    git(root, "rm", "-q", "memory/episodes/2026/08/ep-04yqq457qh.yaml")
    git(root, "commit", "-q", "-m", "drop one on other")
    assert a.id in ids(demo_repo) and "ep-04yqq457qh" not in ids(demo_repo)
    git(root, "checkout", "-q", "main")
    (b,) = add_episodes(demo_repo, [{"task": "Only on main", "outcome": "o"}])
    got = ids(demo_repo)
    assert b.id in got and a.id not in got and "ep-04yqq457qh" in got
    assert_matches_rebuild(demo_repo)
    git(root, "checkout", "-q", "other")
    got = ids(demo_repo)
    assert a.id in got and b.id not in got and "ep-04yqq457qh" not in got
    assert_matches_rebuild(demo_repo)


def test_reset_hard_to_an_earlier_commit(demo_repo: MemoryRepo) -> None:
    (ep,) = add_episodes(demo_repo, [{"task": "Soon undone", "outcome": "o"}])
    assert ep.id in ids(demo_repo)
    git(demo_repo.root, "reset", "-q", "--hard", "HEAD~1")
    stats = refresh_stats(demo_repo)
    assert stats.episodes_removed == 1
    assert ep.id not in ids(demo_repo) and len(ids(demo_repo)) == 34
    assert_matches_rebuild(demo_repo)


def test_indexed_commit_gone_after_rebase_and_gc_falls_back_to_blob_ids(demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    base = git(root, "rev-parse", "HEAD").stdout.strip()
    (gone,) = add_episodes(
        demo_repo, [{"task": "Rewritten away", "outcome": "o", "at": "2026-11-21T00:00:00Z"}]
    )
    with open_index(demo_repo) as index:
        indexed = index.indexed_commit
    assert gone.id in ids(demo_repo)
    folders = [
        demo_repo.episodes_dir,
        demo_repo.episodes_dir / "2026",
        demo_repo.episodes_dir / "2026" / "11",
    ]
    mtimes = {f: f.stat().st_mtime_ns for f in folders}
    # History rewritten: the indexed commit is replaced and then garbage-collected.
    git(root, "reset", "-q", "--hard", base)
    new_path = write_episode(demo_repo, "ep-rebased0001", at="2026-11-22T00:00:00Z")
    git(root, "add", new_path)
    git(root, "commit", "-q", "-m", "rebased")
    git(root, "reflog", "expire", "--expire=now", "--all")
    git(root, "gc", "-q", "--prune=now")
    assert git(root, "cat-file", "-e", str(indexed), check=False).returncode != 0
    # Make the folders look untouched, so only the blob comparison can find the changes.
    for folder, mtime in mtimes.items():
        os.utime(folder, ns=(mtime, mtime))
    stats = refresh_stats(demo_repo)
    assert (stats.episodes_added, stats.episodes_removed) == (1, 1)
    got = ids(demo_repo)
    assert "ep-rebased0001" in got and gone.id not in got
    assert_matches_rebuild(demo_repo)


def test_unborn_branch_and_empty_memory(git_repo: Path) -> None:
    from scarwarden.files.scaffold import init
    from scarwarden.repo import open_repo

    fresh = git_repo.parent / "fresh"
    fresh.mkdir()
    git(fresh, "init", "-q", "-b", "main")
    repo = open_repo(fresh, initialised=False)
    init(repo, commit=False)
    with open_index(repo) as index:
        assert index.indexed_commit is None
        assert index.episode_count() == 0 and index.rules() == []
    write_episode(repo, "ep-unborn0001")
    assert ids(repo) == {"ep-unborn0001"}
    git(fresh, "add", "-A")
    git(fresh, "commit", "-q", "-m", "first")
    assert ids(repo) == {"ep-unborn0001"}
    assert_matches_rebuild(repo)


def test_unborn_branch_with_a_second_uncommitted_episode_in_one_folder(git_repo: Path) -> None:
    """The folder of an uncommitted episode moved again: asking git which of its loose
    files are committed text failed with no commit to ask about ("Not a valid object
    name HEAD"), and so did every read after it."""
    from scarwarden.files.scaffold import init
    from scarwarden.repo import open_repo

    fresh = git_repo.parent / "fresh"
    fresh.mkdir()
    git(fresh, "init", "-q", "-b", "main")
    repo = open_repo(fresh, initialised=False)
    init(repo, commit=False)
    write_episode(repo, "ep-unborn0001")
    assert ids(repo) == {"ep-unborn0001"}
    write_episode(repo, "ep-unborn0002")
    assert ids(repo) == {"ep-unborn0001", "ep-unborn0002"}
    assert_matches_rebuild(repo)


# -- concurrency ----------------------------------------------------------------------------


def test_readers_never_see_a_half_built_index(demo_repo: MemoryRepo, tmp_path: Path) -> None:
    open_index(demo_repo).close()
    stop = tmp_path / "stop"
    rebuilder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
        import pathlib
        from scarwarden.repo import open_repo
        from scarwarden.index import rebuild
        repo = open_repo({str(demo_repo.root)!r})
        n = 0
        while not pathlib.Path({str(stop)!r}).exists() and n < 400:
            rebuild(repo); n += 1
        print(n)
    """),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    reader = subprocess.run(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
        import json, subprocess, sys
        bad = []
        for _ in range(4):
            p = subprocess.run(["scarwarden", "-C", {str(demo_repo.root)!r}, "episode", "list",
                                "--json"], capture_output=True, text=True)
            try:
                n = len(json.loads(p.stdout))
            except ValueError:
                n = None
            if p.returncode != 0 or n != 34 or p.stderr:
                bad.append((p.returncode, n, p.stderr[-300:]))
        print(json.dumps(bad))
    """),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    stop.write_text("")
    rebuilds = int(rebuilder.communicate(timeout=60)[0])
    assert reader.returncode == 0, reader.stderr
    assert json.loads(reader.stdout) == []
    assert rebuilds >= 3  # the reads really overlapped with rebuilds


def test_threads_that_find_the_index_missing_rebuild_it_once_between_them(
    demo_repo: MemoryRepo, caplog: pytest.LogCaptureFixture
) -> None:
    # An MCP server's tools run on threads: a burst of recalls on a missing index each
    # rebuilt it through the same temporary file ("table meta already exists").
    import threading

    demo_repo.index_path.unlink(missing_ok=True)
    errors: list[BaseException] = []
    modes: list[str] = []
    start = threading.Barrier(6)

    def recall_in_a_thread() -> None:
        start.wait()
        try:
            with open_index(demo_repo) as index:
                modes.append(index.stats.mode)
                assert index.get_rule("PB-01") is not None
        except BaseException as exc:  # noqa: BLE001 - every thread's failure is the test's
            errors.append(exc)

    threads = [threading.Thread(target=recall_in_a_thread) for _ in range(6)]
    with caplog.at_level(logging.WARNING):
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert errors == []
    assert sorted(modes).count("rebuild") == 1  # the others found it built
    assert list(demo_repo.state_dir.glob("index.db.tmp-*")) == []
    assert "corrupt" not in caplog.text
