"""The Python API: typed results, the documented exceptions with their exit codes, and
no lock or half-written file left behind by a call that raises."""

from __future__ import annotations

import fcntl
import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import git
from fake_secrets import fake_secrets

import scarwarden
from scarwarden.errors import ExitCode
from scarwarden.repo import MemoryRepo

TASK = "Post our discount code on Twitter"


def assert_clean(repo: MemoryRepo, head: str) -> None:
    """Nothing written, nothing staged, no temporary file, the write lock free."""
    assert git(repo.root, "rev-parse", "HEAD").stdout.strip() == head
    assert git(repo.root, "status", "--porcelain", "--untracked-files=all").stdout == ""
    assert not (repo.root / ".git" / "index.lock").exists()
    lock = repo.state_dir / "write.lock"
    if lock.exists():
        with lock.open("a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)  # raises if still held
            fcntl.flock(handle, fcntl.LOCK_UN)


def test_the_package_top_exports_the_api_lazily() -> None:
    code = (
        "import sys, scarwarden; assert 'scarwarden.api' not in sys.modules; "
        "scarwarden.open_memory; assert 'scarwarden.api' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    assert scarwarden.Memory is scarwarden.api.Memory
    with pytest.raises(AttributeError):
        scarwarden.nothing_here  # noqa: B018
    assert (Path(scarwarden.__file__).parent / "py.typed").is_file()
    assert scarwarden._API == set(scarwarden.api.__all__)


def test_recall_record_answer_read_return_typed_results(demo_repo: MemoryRepo) -> None:
    memory = scarwarden.open_memory(demo_repo.root)
    found = memory.recall(TASK, explain=True)
    assert isinstance(found, scarwarden.Recall)
    assert found.verdict == "ACT" and found.rules[0].id == "PB-02"
    assert found.rules[0].cite_as.startswith("[PB-02, learnt in ep-")
    assert found.receipt is not None and found.receipt["rules"] == [r.id for r in found.rules]
    assert found.explanation is not None and found.data["explain"] is found.explanation
    assert found.data["rules"][0]["id"] == "PB-02"
    recorded = memory.record(TASK, action="Kept the code out", rules_applied="PB-02", receipt=found.receipt)
    assert isinstance(recorded, scarwarden.Recorded)
    assert recorded.rules_applied == ["PB-02"] and recorded.receipt == found.receipt
    assert git(demo_repo.root, "rev-parse", "HEAD").stdout.strip() == recorded.commit
    assert recorded.path.endswith(f"{recorded.id}.yaml")
    episode = memory.episode(recorded.id)
    assert isinstance(episode, scarwarden.EpisodeRecord)
    assert (
        episode.task == TASK
        and episode.get("action") == "Kept the code out"
        and episode.path == recorded.path
    )
    rule = memory.rule("pb-02")
    assert isinstance(rule, scarwarden.Rule) and rule.id == "PB-02" and not rule.retired
    assert rule.cite_as == found.rules[0].cite_as
    assert rule.episode_ids[0] in memory.episode(rule.episode_ids[0]).id
    assert "PB-02" in memory.episode(rule.episode_ids[0]).cited_by
    answered = memory.answer("Choose the colour of the office plants", "Green ones")
    assert answered.episode["source"] == "human-answer" and answered.episode["correction"] == "Green ones"


def test_distill_dry_run_writes_nothing(demo_repo: MemoryRepo) -> None:
    memory = scarwarden.open_memory(demo_repo.root)
    memory.record("Write the release notes", correction="Lead with what users can now do")
    head = git(demo_repo.root, "rev-parse", "HEAD").stdout.strip()
    proposal = memory.distill(offline=True)
    assert isinstance(proposal, scarwarden.Distillation)
    assert proposal.distiller == "offline" and proposal.dry_run and proposal.commit is None
    assert proposal.changes and proposal.diff.startswith("--- a/memory/playbook.md")
    assert_clean(demo_repo, head)
    landed = memory.distill(offline=True, dry_run=False)
    assert landed.commit == git(demo_repo.root, "rev-parse", "HEAD").stdout.strip()


def test_documented_exceptions_with_exit_codes_and_nothing_left_behind(
    demo_repo: MemoryRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = scarwarden.open_memory(demo_repo.root)
    head = git(demo_repo.root, "rev-parse", "HEAD").stdout.strip()
    token = fake_secrets()["github-token"]
    cases = [
        (lambda: memory.record("Tag this", tags=["Not A Slug!"]), scarwarden.ValidationError, "tags"),
        (lambda: memory.record("Push", action=token), scarwarden.ValidationError, "holds a secret"),
        (lambda: memory.record("x", at="2026-01-01T00:00:00Z"), scarwarden.UsageError, "does not take 'at'"),
        (
            lambda: memory.record("x", action="y", receipt={"receipt": "forged"}),
            scarwarden.ScarwardenError,
            "receipt",
        ),
        (lambda: memory.recall("   "), scarwarden.UsageError, "task"),
        (lambda: memory.answer("x", " "), scarwarden.UsageError, "'answer' is empty"),
        (lambda: memory.rule("PB-99"), scarwarden.UsageError, "no rule PB-99"),
        (lambda: memory.episode("ep-nothere00"), scarwarden.UsageError, "no episode ep-nothere00"),
    ]
    for call, kind, says in cases:
        with pytest.raises(kind) as caught:
            call()
        assert says in caught.value.render(), caught.value.render()
        assert caught.value.exit_code == {scarwarden.ValidationError: 1, scarwarden.UsageError: 2}.get(
            type(caught.value), caught.value.exit_code
        )
        assert_clean(demo_repo, head)
    monkeypatch.setenv("SCARWARDEN_API_KEY", "")
    for var in ("DASHSCOPE_API_KEY", "OPENAI_API_KEY", "SCARWARDEN_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    memory.repo.root.joinpath("x")  # the same memory object still works after every raise
    with pytest.raises(scarwarden.NoModelConfigured) as no_model:
        scarwarden.Memory(memory.repo, environ={}).distill(offline=False)
    assert no_model.value.exit_code == ExitCode.NO_MODEL == 4
    assert_clean(demo_repo, head)
    with pytest.raises(scarwarden.UsageError) as outside:
        scarwarden.open_memory(tmp_path)
    assert outside.value.exit_code == ExitCode.USAGE
    assert memory.record("After the failures", action="Recorded").commit  # the lock was freed


def test_a_failing_commit_leaves_no_file_and_no_lock(demo_repo: MemoryRepo) -> None:
    """The commit itself refused (a hook that fails): the journal undoes the write."""
    hook = demo_repo.root / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(parents=True, exist_ok=True)
    saved = hook.read_text() if hook.exists() else None
    hook.write_text("#!/bin/sh\necho refused by a test hook >&2\nexit 1\n")
    hook.chmod(0o755)
    head = git(demo_repo.root, "rev-parse", "HEAD").stdout.strip()
    memory = scarwarden.open_memory(demo_repo.root)
    try:
        with pytest.raises(scarwarden.GitError) as refused:
            memory.record("Refused by the hook", action="Tried")
        assert "the pre-commit hook refused the commit" in refused.value.message
        assert refused.value.exit_code == ExitCode.CHECK_FAILED
        assert_clean(demo_repo, head)
    finally:
        if saved is None:
            hook.unlink()
        else:
            hook.write_text(saved)


def test_import_runs_from_a_path_or_a_stream(memory_repo: MemoryRepo, tmp_path: Path) -> None:
    memory = scarwarden.open_memory(memory_repo.root)
    conversation = [{"role": "user", "content": "Refund order 42"}, {"role": "assistant", "content": "Done."}]
    runs = tmp_path / "runs.jsonl"
    runs.write_text(json.dumps(conversation) + "\n")
    head = git(memory_repo.root, "rev-parse", "HEAD").stdout.strip()
    preview = memory.import_runs(runs, "openai-chat", corrections={1: "Ask first"}, dry_run=True)
    assert isinstance(preview, scarwarden.ImportResult) and preview.dry_run and preview.commit is None
    assert preview.added[0].get("correction") == "Ask first"
    assert_clean(memory_repo, head)
    with runs.open("rb") as stream:
        done = memory.import_runs(stream, "openai-chat", name="runs.jsonl")
    assert done.added[0].id == preview.added[0].id  # the ID is the content's
    assert done.commit == git(memory_repo.root, "rev-parse", "HEAD").stdout.strip()
    with pytest.raises(scarwarden.UsageError) as missing:
        memory.import_runs(tmp_path / "nothing.jsonl", "openai-chat")
    assert "cannot read" in missing.value.message and missing.value.exit_code == 2
    with pytest.raises(scarwarden.UsageError) as device:  # was read up to the 256 MiB cap
        memory.import_runs(Path("/dev/zero"), "openai-chat")
    said = "/dev/zero: not a regular file or a pipe (a character device); nothing was read"
    assert device.value.message == said and device.value.exit_code == 2
    with pytest.raises(scarwarden.UsageError) as unknown:
        memory.import_runs(runs, "langchain")
    assert unknown.value.hint == "the formats are openai-chat, tau-bench"


def test_one_memory_shared_by_threads(demo_repo: MemoryRepo) -> None:
    memory = scarwarden.open_memory(demo_repo.root)
    ids: list[str] = []
    errors: list[BaseException] = []

    def record(n: int) -> None:
        try:
            ids.append(memory.record(f"Thread task {n}", action=f"Did {n}").id)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=record, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and len(set(ids)) == 4
    log = git(demo_repo.root, "log", "-4", "--format=%s").stdout.splitlines()
    assert sorted(log) == sorted(f"episode: Thread task {n}" for n in range(4))


def test_an_import_at_in_the_future_is_refused_unless_asked(demo_repo: MemoryRepo) -> None:
    """``import_runs(..., at="2999-01-01T00:00:00Z")`` was accepted, a mistyped year kept
    for good, where ``episode import --at`` refuses it without ``--allow-future``."""
    memory = scarwarden.open_memory(demo_repo.root)
    head = git(demo_repo.root, "rev-parse", "HEAD").stdout.strip()
    run = [{"role": "user", "content": "Plan the offsite"}, {"role": "assistant", "content": "Booked"}]
    (demo_repo.root.parent / "runs.jsonl").write_text(json.dumps(run) + "\n")
    source = demo_repo.root.parent / "runs.jsonl"
    for dry_run in (True, False):
        with pytest.raises(scarwarden.UsageError) as raised:
            memory.import_runs(source, "openai-chat", at="2999-01-01T00:00:00Z", dry_run=dry_run)
        assert "'at' 2999-01-01T00:00:00Z is in the future" in raised.value.message
        assert "allow_future=True" in (raised.value.hint or "")
        assert_clean(demo_repo, head)
    with pytest.raises(scarwarden.UsageError) as raised:
        memory.import_runs(source, "openai-chat", at="2020-01-01T00:00:00Z", allow_future="yes")
    assert "'allow_future' must be True or False, not str" in raised.value.message
    assert memory.import_runs(source, "openai-chat", at="2020-01-01T00:00:00Z", dry_run=True).added
    result = memory.import_runs(source, "openai-chat", at="2999-01-01T00:00:00Z", allow_future=True)
    assert [ep.to_json()["at"] for ep in result.added] == ["2999-01-01T00:00:00Z"]


@pytest.mark.parametrize("refs", [None, [], ["ep-aaaaaaaaaa"]])
@pytest.mark.parametrize(
    ("task", "says"),
    [
        ("Plan the offsite " + "x" * 25_000, "the task is 25,017 characters; the limit is 20,000"),
        ("Plan the \x1b offsite", "the task holds an escape character (U+001B)"),
    ],
)
def test_answer_checks_the_task_as_ask_does(
    demo_repo: MemoryRepo, refs: list[str] | None, task: str, says: str
) -> None:
    """``answer`` recorded a 25,017-character task (``ask`` refuses one over 20,000, as
    recall does: the task is its receipt's and the log's), and an escape character was
    a ValidationError (exit 1), not ask's usage error (exit 2)."""
    memory = scarwarden.open_memory(demo_repo.root)
    head = git(demo_repo.root, "rev-parse", "HEAD").stdout.strip()
    with pytest.raises(scarwarden.UsageError) as raised:
        memory.answer(task, "Book the hall", refs=refs)
    assert says in raised.value.message
    assert_clean(demo_repo, head)


def test_a_batch_at_in_the_future_is_refused_unless_asked(demo_repo: MemoryRepo, cli: Any) -> None:
    """An episode input's ``at: 2999-01-01T00:00:00Z`` (``record_batch``, and so
    ``episode add --file``: YAML reads it as a datetime) was recorded for good, where
    ``episode add --at`` refuses it without ``--allow-future``."""
    memory = scarwarden.open_memory(demo_repo.root)
    head = git(demo_repo.root, "rev-parse", "HEAD").stdout.strip()
    past = {"task": "Plan the offsite", "correction": "Book the hall", "at": "2020-01-01T00:00:00Z"}
    future = {**past, "at": "2999-01-01T00:00:00Z"}
    with pytest.raises(scarwarden.UsageError) as raised:
        memory.record_batch([past, future], commit=False)
    assert "<input>: episode 2's 'at' 2999-01-01T00:00:00Z is in the future" in raised.value.message
    assert_clean(demo_repo, head)
    yaml = b"task: x\ncorrection: y\nat: 2999-01-01T00:00:00Z\n"
    added = cli("episode", "add", "--file", "-", input=yaml)
    assert added.exit_code == 2 and "is in the future" in added.stderr, added.output
    assert "--allow-future" in added.stderr
    assert_clean(demo_repo, head)
    allowed = cli("episode", "add", "--file", "-", "--allow-future", input=yaml)
    assert allowed.exit_code == 0, allowed.output
    (recorded,) = memory.record_batch([future], allow_future=True)
    assert recorded.episode["at"] == "2999-01-01T00:00:00Z"
