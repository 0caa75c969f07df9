"""The support check (issue 25): every sentence shares words with the episodes it names."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git
from helpers import commit_no_verify, write_episode

from scarwarden.distill import distill
from scarwarden.files import playbook as pb
from scarwarden.files.record import add_episodes
from scarwarden.gate.check import check_all, check_range, check_staged
from scarwarden.gate.hooks import install
from scarwarden.gate.ledger import CITED, cache_dir, warm
from scarwarden.gate.support import supporting_words, unsupported
from scarwarden.gate.verify import verify
from scarwarden.repo import MemoryRepo

LESSONS = [
    {
        "at": "2026-11-01T10:00:00Z",
        "task": "Cancel the trip",
        "correction": "Cancel reservation Z7GOZK before refunding the certificate",
        "tags": ["cancel"],
        "source": "correction",
    },
    {
        "at": "2026-11-02T10:00:00Z",
        "task": "Write the webinar invite",
        "correction": "Always state the timezone in webinar invitations",
        "tags": ["webinar"],
        "source": "correction",
    },
]


def _two_rules(repo: MemoryRepo) -> tuple[str, str, pb.Playbook]:
    cancel, webinar = (ep.id for ep in add_episodes(repo, LESSONS))
    distill(repo, offline=True)
    return cancel, webinar, pb.parse(repo.playbook_path.read_text())


def _edit(repo: MemoryRepo, old: str, new: str) -> None:
    path = repo.playbook_path
    path.write_text(path.read_text().replace(old, new, 1))


def test_the_offline_distillers_output_is_supported_everywhere(memory_repo: MemoryRepo) -> None:
    cancel, webinar, book = _two_rules(memory_repo)
    assert [r.said()[0].kind for r in book.rules] == ["stated", "stated"]
    report = check_all(memory_repo.root)
    assert report.ok and not report.warnings, report.problems
    assert verify(memory_repo.root).ok


def test_a_hand_edit_naming_an_uncited_episode_is_refused_by_the_hook(memory_repo: MemoryRepo) -> None:
    cancel, webinar, book = _two_rules(memory_repo)
    install(memory_repo.root)
    _edit(memory_repo, f"- Sentences from: 1: {webinar}", f"- Sentences from: 1: {cancel}")
    git(memory_repo.root, "add", "-A")
    proc = git(memory_repo.root, "commit", "-m", "hand edit", check=False)
    assert proc.returncode != 0
    assert "'Always state the timezone in webinar invitations.'" in proc.stderr
    assert f"names {cancel}, which 'Learnt in' does not cite" in proc.stderr
    assert "cite the episode in '- Learnt in:'" in proc.stderr  # the fix


def test_a_map_naming_an_episode_that_does_not_exist_is_refused(memory_repo: MemoryRepo) -> None:
    cancel, webinar, book = _two_rules(memory_repo)
    _edit(
        memory_repo,
        f"- Learnt in: {webinar}\n- Sentences from: 1: {webinar}",
        f"- Learnt in: {webinar}, ep-nosuch0001\n- Sentences from: 1: ep-nosuch0001",
    )
    git(memory_repo.root, "add", "-A")
    report = check_staged(memory_repo.root)
    assert not report.ok
    messages = " | ".join(p.message for p in report.problems)
    assert "cites ep-nosuch0001, which is not an episode" in messages


def test_a_sentence_its_episode_never_said_is_an_error_and_a_models_is_a_warning(
    memory_repo: MemoryRepo,
) -> None:
    cancel, webinar, book = _two_rules(memory_repo)
    base = git(memory_repo.root, "rev-parse", "HEAD").stdout.strip()
    # Both rules cite both episodes now; the webinar sentence is attributed to the
    # cancellation episode, whose words it does not share.
    _edit(
        memory_repo,
        f"- Learnt in: {webinar}\n- Sentences from: 1: {webinar}",
        f"- Learnt in: {webinar}, {cancel}\n- Sentences from: 1: {cancel}",
    )
    git(memory_repo.root, "add", "-A")
    report = check_staged(memory_repo.root)
    (problem,) = [p for p in report.problems if p.code == "sentence-unsupported"]
    assert "sentence 1 shares no word with" in problem.message and cancel in problem.message
    assert "'Always state the timezone in webinar invitations.'" in problem.message
    assert problem.hint and "Sentences from" in problem.hint
    # The same sentence marked as a model's: a warning, the commit may go on.
    mapped = f"{webinar}, {cancel}\n- Sentences from: 1: {cancel}"
    _edit(memory_repo, mapped, f"{mapped} (model)")
    git(memory_repo.root, "add", "-A")
    report = check_staged(memory_repo.root)
    assert not [p for p in report.problems if p.code == "sentence-unsupported"]
    assert [w.code for w in report.warnings] == ["sentence-unsupported"]
    git(memory_repo.root, "commit", "-q", "-m", "model sentence", "--no-verify")
    ranged = check_range(memory_repo.root, base, "HEAD")
    assert [w.code for w in ranged.warnings] == ["sentence-unsupported"] and ranged.ok
    assert [w.code for w in check_all(memory_repo.root).warnings] == ["sentence-unsupported"]
    # Back to a stated sentence, committed past the hook: verify and check find it.
    _edit(memory_repo, f"{mapped} (model)", mapped)
    git(memory_repo.root, "commit", "-q", "-am", "stated", "--no-verify")
    assert any(p.code == "sentence-unsupported" for p in verify(memory_repo.root).problems)
    assert any(p.code == "sentence-unsupported" for p in check_range(memory_repo.root, base, "HEAD").problems)
    assert any(p.code == "sentence-unsupported" for p in check_all(memory_repo.root).problems)


def test_supporting_words_show_what_the_episode_said(memory_repo: MemoryRepo) -> None:
    cancel, webinar, book = _two_rules(memory_repo)
    rule = [r for r in book.rules if webinar in r.episode_ids][0]
    from scarwarden.distill import state

    ledger = state.ledger_at(memory_repo, "HEAD")
    (episode,) = state.load_episodes(memory_repo, ledger, [webinar])[0]
    [(ep_id, words)] = supporting_words(rule.text, [episode])
    assert ep_id == webinar and {"timezone", "webinar", "state", "invite"} <= set(words)
    assert unsupported(book, {webinar: episode}) == []


def test_the_demo_memory_and_this_repositorys_memory_pass_the_support_check(demo_repo: MemoryRepo) -> None:
    report = check_all(demo_repo.root)
    assert report.ok, report.problems
    assert not [w for w in report.warnings if w.code == "sentence-unsupported"]


def _tree_listings(trace: str, episodes_rel: str) -> int:
    """How many ``git ls-tree -r`` of the whole episodes folder a GIT_TRACE log shows."""
    return sum(
        1 for line in trace.splitlines() if " ls-tree -r " in line and line.endswith(f"-- {episodes_rel}")
    )


def test_the_range_check_finds_cited_episodes_by_the_cached_statistics(
    memory_repo: MemoryRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 30: with the ledger statistics cached (or a diff away), the support check
    at a range's end finds each cited episode by its month, without listing the ledger;
    the same warnings as the listing gives."""
    cancel, webinar, book = _two_rules(memory_repo)
    base = git(memory_repo.root, "rev-parse", "HEAD").stdout.strip()
    mapped = f"{webinar}, {cancel}\n- Sentences from: 1: {cancel}"
    _edit(
        memory_repo,
        f"- Learnt in: {webinar}\n- Sentences from: 1: {webinar}",
        f"- Learnt in: {mapped} (model)",
    )
    add_episodes(memory_repo, [{**LESSONS[0], "at": "2026-11-03T10:00:00Z", "task": "Another trip"}])
    git(memory_repo.root, "commit", "-q", "-am", "model sentence and an episode", "--no-verify")

    def ranged(start: str = base, **env: str) -> tuple[list[str], int]:
        log = tmp_path / f"trace-{len(env)}-{sorted(env)}"
        monkeypatch.setenv("GIT_TRACE", str(log))
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        report = check_range(memory_repo.root, start, "HEAD")
        monkeypatch.delenv("GIT_TRACE")
        return [w.message for w in report.warnings], _tree_listings(log.read_text(), memory_repo.episodes_rel)

    listed, listings = ranged(SCARWARDEN_LEDGER_CACHE="off")
    assert len(listed) == 1 and cancel in listed[0] and listings == 1
    monkeypatch.delenv("SCARWARDEN_LEDGER_CACHE")
    assert warm(memory_repo.root, "HEAD~1") is not None  # the base's statistics, cached
    assert ranged() == (listed, 0)
    # The next range starts where that one ended: the cited episodes' places there are
    # carried over by the diff between the two trees, with no statistics (none left).
    start = git(memory_repo.root, "rev-parse", "HEAD").stdout.strip()
    add_episodes(memory_repo, [{**LESSONS[1], "at": "2026-11-04T10:00:00Z", "task": "Another invite"}])
    assert git(memory_repo.root, "rev-parse", "HEAD~1").stdout.strip() == start  # committed
    kept = cache_dir(memory_repo.root)
    assert kept is not None
    for entry in kept.glob("*.json"):
        if entry.name != CITED:
            entry.unlink()
    assert ranged(start) == (listed, 0)


def test_cited_places_carry_over_from_the_newest_kept_tree(
    demo_repo: MemoryRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hook's range starts at a tree no run kept the cited episodes' places for (the
    branch tip the last check ended at moved on): they are carried over from the newest
    tree kept by one diff, with no statistics and no listing of the ledger; the same
    answer as with the cache off."""
    root = demo_repo.root
    assert warm(root, "HEAD") is not None  # cited.json: HEAD's places
    for n in (1, 2):
        write_episode(demo_repo, f"ep-scale0carr{n}", task=f"Reply to billing ticket {n}")
        commit_no_verify(root, f"episode {n}")
    kept = cache_dir(root)
    assert kept is not None
    for entry in kept.glob("*.json"):
        if entry.name != CITED:
            entry.unlink()  # no statistics to find them by

    def ranged(**env: str) -> tuple[list[str], list[str], int]:
        log = tmp_path / f"trace-{sorted(env)}"
        monkeypatch.setenv("GIT_TRACE", str(log))
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        report = check_range(root, "HEAD~1", "HEAD")
        monkeypatch.delenv("GIT_TRACE")
        for name in env:
            monkeypatch.delenv(name)
        listings = _tree_listings(log.read_text(), demo_repo.episodes_rel)
        return [p.code for p in report.problems], [w.message for w in report.warnings], listings

    problems, warnings, listings = ranged(SCARWARDEN_LEDGER_CACHE="off")
    assert listings == 1
    assert ranged() == (problems, warnings, 0)


@pytest.mark.parametrize(("sentences", "said"), [(1, "1 sentence checked"), (2, "2 sentences checked")])
def test_the_summary_counts_sentences_in_english(sentences: int, said: str) -> None:
    # "sentences_checked" had no noun of its own: "1 sentences checked", "2 sentencess checked".
    from scarwarden.gate.report import CheckReport

    report = CheckReport("all")
    report.count("sentences_checked", sentences)
    assert report.summary() == f"scarwarden check: OK, the memory tree ({said})"
