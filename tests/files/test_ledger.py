"""Writing the ledger: atomic files, one commit per call, trailers, all-or-nothing."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from conftest import git
from helpers import State

from scarwarden.errors import GitError, ScarwardenError, ValidationError
from scarwarden.files.atomic import atomic_write
from scarwarden.files.episode_input import parse_input_documents
from scarwarden.files.episodes import parse_episode_bytes
from scarwarden.files.record import add_episodes, commit_message
from scarwarden.index import open_index
from scarwarden.repo import MemoryRepo


def commit_files(root: Path, rev: str = "HEAD") -> list[str]:
    out = git(root, "show", "--name-only", "--format=", rev).stdout
    return [line for line in out.splitlines() if line]


def trailers(root: Path, rev: str = "HEAD") -> list[str]:
    out = git(root, "log", "-1", "--format=%(trailers:key=Scarwarden-Episode,valueonly)", rev)
    return [line for line in out.stdout.splitlines() if line]


def test_add_one_episode_writes_canonical_file_and_commits_it_alone(memory_repo: MemoryRepo) -> None:
    root = memory_repo.root
    (root / "notes.txt").write_text("staged by the user\n")
    git(root, "add", "notes.txt")
    (ep,) = add_episodes(
        memory_repo,
        [
            {
                "task": "Write the webinar invite",
                "correction": "Always give the timezone",
                "tags": ["Webinar", "timezone"],
                "at": "2026-11-10T09:00:00Z",
            }
        ],
        source="t",
    )
    rel = f"memory/episodes/2026/11/{ep.id}.yaml"
    assert ep.relpath() == rel
    raw = (root / rel).read_bytes()
    assert raw == ep.render().encode("utf-8")
    assert parse_episode_bytes(raw, rel, episodes_dir="memory/episodes") == ep
    assert ep.tags == ["webinar", "timezone"]
    assert commit_files(root) == [rel]
    assert trailers(root) == [ep.id]
    subject = git(root, "log", "-1", "--format=%s").stdout.strip()
    assert subject == "episode: Write the webinar invite"
    # what the user had staged is still staged, and not committed
    assert git(root, "diff", "--cached", "--name-only").stdout == "notes.txt\n"
    assert not list((root / "memory/episodes/2026/11").glob(".*.tmp"))
    with open_index(memory_repo) as index:
        assert index.get_episode(ep.id) == ep


def test_commit_message_truncates_long_tasks() -> None:
    from scarwarden.files.episodes import Episode

    ep = Episode({"id": "ep-abcdefghjk", "at": "2026-11-10T09:00:00Z", "task": "word " * 30, "outcome": "o"})
    subject = commit_message([ep]).splitlines()[0]
    assert subject.startswith("episode: word word") and subject.endswith("...")
    assert len(subject) == len("episode: ") + 60 + 3


@pytest.mark.parametrize("form", ["yaml", "json", "jsonl"])
def test_batch_is_one_commit_with_one_trailer_per_episode(memory_repo: MemoryRepo, form: str) -> None:
    root = memory_repo.root
    before = git(root, "rev-parse", "HEAD").stdout.strip()
    items = [
        {"task": f"Task {i}", "outcome": f"Outcome {i}", "at": f"2026-0{i}-15T12:00:00Z"} for i in range(1, 5)
    ]
    import json

    raw = {
        "yaml": "".join(
            f"- task: Task {i}\n  outcome: Outcome {i}\n  at: 2026-0{i}-15T12:00:00Z\n" for i in range(1, 5)
        ),
        "json": json.dumps(items, indent=2),
        "jsonl": "\n".join(json.dumps(i) for i in items) + "\n",
    }[form]
    inputs = parse_input_documents(raw.encode(), source=f"batch.{form}")
    episodes = add_episodes(memory_repo, inputs, source=f"batch.{form}")
    assert [e.task for e in episodes] == ["Task 1", "Task 2", "Task 3", "Task 4"]
    assert git(root, "rev-list", "--count", f"{before}..HEAD").stdout.strip() == "1"
    assert trailers(root) == [e.id for e in episodes]
    assert sorted(commit_files(root)) == sorted(e.relpath() for e in episodes)
    assert git(root, "log", "-1", "--format=%s").stdout.strip() == "episodes: import 4 episodes"
    assert {e.relpath().split("/")[3] for e in episodes} == {"01", "02", "03", "04"}
    assert git(root, "status", "--porcelain").stdout == ""


def test_batch_with_an_invalid_third_item_writes_nothing(memory_repo: MemoryRepo) -> None:
    raw = (
        b"- task: One\n  outcome: fine\n"
        b"- task: Two\n  outcome: fine\n"
        b"- task: Three\n  corection: typo\n  tags: [ok, Not OK]\n"
        b"- task: Four\n  outcome: fine\n"
    )
    inputs = parse_input_documents(raw, source="import.yaml")
    state = State.of(memory_repo)
    with pytest.raises(ValidationError) as exc:
        add_episodes(memory_repo, inputs, source="import.yaml")
    assert exc.value.message == "import.yaml: invalid episode input; nothing was written"
    got = [(p.file, p.line, p.field, p.message) for p in exc.value.problems]
    assert got == [
        ("import.yaml", 6, "corection", "unknown key (item 3)"),
        ("import.yaml", 5, None, "an episode needs at least one of action, outcome, correction (item 3)"),
        ("import.yaml", 7, "tags", "tag 'Not OK' is not a slug (item 3)"),
    ]
    assert State.of(memory_repo) == state


def test_no_commit_stages_exactly_the_new_files(memory_repo: MemoryRepo) -> None:
    root = memory_repo.root
    head = git(root, "rev-parse", "HEAD").stdout.strip()
    episodes = add_episodes(
        memory_repo, [{"task": "a", "outcome": "b"}, {"task": "c", "outcome": "d"}], commit=False
    )
    assert git(root, "rev-parse", "HEAD").stdout.strip() == head
    staged = git(root, "diff", "--cached", "--name-status").stdout.splitlines()
    assert sorted(staged) == sorted(f"A\t{e.relpath()}" for e in episodes)
    with open_index(memory_repo) as index:
        assert index.existing_episode_ids(e.id for e in episodes) == {e.id for e in episodes}


def test_existing_id_is_refused_and_nothing_written(demo_repo: MemoryRepo) -> None:
    state = State.of(demo_repo)
    with pytest.raises(ValidationError) as exc:
        add_episodes(demo_repo, [{"id": "ep-9ak5fm33w3", "task": "again", "outcome": "o"}])
    assert exc.value.message == "episode ep-9ak5fm33w3 already exists in the ledger"
    assert "append-only" in (exc.value.hint or "")
    # same ID, another month: would be a second file with that ID
    with pytest.raises(ValidationError):
        add_episodes(
            demo_repo,
            [{"id": "ep-9ak5fm33w3", "task": "again", "outcome": "o", "at": "2025-01-01T00:00:00Z"}],
        )
    with pytest.raises(ValidationError, match="appears twice in the input"):
        add_episodes(
            demo_repo,
            [
                {"id": "ep-newone1234", "task": "a", "outcome": "o"},
                {"id": "ep-newone1234", "task": "b", "outcome": "o"},
            ],
        )
    assert State.of(demo_repo) == state


def test_existing_id_is_found_in_the_files_not_the_index(memory_repo: MemoryRepo) -> None:
    root = memory_repo.root
    (ep,) = add_episodes(
        memory_repo, [{"id": "ep-committed01", "task": "t", "outcome": "o", "at": "2026-03-04T05:06:07Z"}]
    )
    # A clone, a pull or a commit by hand: the files have it, the cache has not seen it.
    memory_repo.index_path.unlink(missing_ok=True)
    head = git(root, "rev-parse", "HEAD").stdout
    status = git(root, "status", "--porcelain", "--untracked-files=all").stdout
    with pytest.raises(ValidationError, match="episode ep-committed01 already exists"):
        add_episodes(
            memory_repo, [{"id": ep.id, "task": "again", "outcome": "o", "at": "2027-01-01T00:00:00Z"}]
        )
    assert git(root, "rev-parse", "HEAD").stdout == head
    assert git(root, "status", "--porcelain", "--untracked-files=all").stdout == status
    assert not memory_repo.index_path.exists()  # the truth never opened the cache


def test_existing_id_in_an_untracked_misplaced_file_is_refused(memory_repo: MemoryRepo) -> None:
    stray = memory_repo.episodes_dir / "drafts" / "old" / "deep" / "ep-untracked01.yaml"
    stray.parent.mkdir(parents=True)
    stray.write_text("not even valid YAML: [\n")
    with pytest.raises(ValidationError, match="episode ep-untracked01 already exists"):
        add_episodes(memory_repo, [{"id": "ep-untracked01", "task": "t", "outcome": "o"}])
    # A file whose name only ends like the ID's is no clash.
    (stray.parent / "copy-of-ep-tracked01.yaml").write_text("id: ep-tracked01\n")
    (ep,) = add_episodes(memory_repo, [{"id": "ep-tracked01", "task": "t", "outcome": "o"}])
    assert (memory_repo.root / ep.relpath()).exists()


def test_rejected_commit_undoes_everything(memory_repo: MemoryRepo) -> None:
    root = memory_repo.root
    (root / "notes.txt").write_text("mine\n")
    git(root, "add", "notes.txt")
    hook = root / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'policy: no commits today' >&2\nexit 1\n")
    hook.chmod(hook.stat().st_mode | stat.S_IEXEC)
    state = State.of(memory_repo)
    with pytest.raises(GitError) as exc:
        add_episodes(memory_repo, [{"task": "a", "outcome": "b", "at": "2031-05-05T00:00:00Z"}])
    assert "policy: no commits today" in exc.value.message
    assert State.of(memory_repo) == state  # incl. no empty 2031/05 folder left behind
    assert not (memory_repo.episodes_dir / "2031").exists()


def test_outside_a_git_repository(tmp_path: Path) -> None:
    from scarwarden.config import Config

    repo = MemoryRepo(tmp_path, Config())
    with pytest.raises(ScarwardenError, match="is not a git repository"):
        add_episodes(repo, [{"task": "a", "outcome": "b"}])
    assert list(tmp_path.iterdir()) == []


def test_atomic_write_replaces_whole_files_and_cleans_up(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b.yaml"
    atomic_write(target, b"one\n")
    atomic_write(target, b"two\n")
    assert target.read_bytes() == b"two\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["b.yaml"]
    (tmp_path / "dir.yaml").mkdir()
    with pytest.raises(OSError):
        atomic_write(tmp_path / "dir.yaml", b"x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "dir.yaml"]


def test_interrupted_write_keeps_the_old_file_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "e.yaml"
    target.write_bytes(b"old content\n")

    def crash(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="No space left"):
        atomic_write(target, b"new content that never lands\n")
    assert target.read_bytes() == b"old content\n"
    assert [p.name for p in tmp_path.iterdir()] == ["e.yaml"]


def test_a_batch_interrupted_halfway_is_undone(
    memory_repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = State.of(memory_repo)
    real_replace = os.replace
    calls = []

    def second_fails(src: str, dst: str) -> None:
        if Path(dst).name.startswith("ep-"):  # the write journal is replaced too
            calls.append(dst)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", second_fails)
    with pytest.raises(OSError):
        add_episodes(
            memory_repo,
            [
                {"task": "a", "outcome": "o", "at": "2030-01-01T00:00:00Z"},
                {"task": "b", "outcome": "o", "at": "2030-02-01T00:00:00Z"},
            ],
        )
    monkeypatch.undo()
    assert len(calls) == 2 and Path(calls[0]).name.startswith("ep-")
    assert State.of(memory_repo) == state
