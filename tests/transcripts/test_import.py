"""``episode import``: recorded runs in, one commit of episodes out, or nothing at all.

Real repositories, the real gate; every refusal asserts its message and that nothing
was written (no commit, no file, no lock).
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from fake_secrets import fake_secrets
from terminal import run_on_terminal

from scarwarden.errors import ExitCode, ValidationError
from scarwarden.files.transcripts import importer, stream
from scarwarden.repo import MemoryRepo

TAU = Path("/work/shared/datasets/tau-airline/gpt-4o-airline.json")
#: The 200 tau-airline episodes (``at`` fixed, IDs aside) the replay benchmark measured.
REPLAY_EPISODES_SHA256 = "a84b65ed2d43711b535cf31e425712c5f443f49efa078427ca90fbe64f75279b"
BENCH = Path(__file__).resolve().parents[2] / "bench"


def call(call_id: str, name: str, args: Any) -> dict[str, Any]:
    text = args if isinstance(args, str) else json.dumps(args)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}


def conversation(task: str = "Refund order 42", **extra: Any) -> dict[str, Any]:
    messages = [
        {"role": "system", "content": "You are a support agent."},
        {"role": "user", "content": task},
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "get_order", {"order_id": 42})]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"status": "delivered", "total": 30}'},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("c2", "refund", {"order_id": 42, "amount": 30})],
        },
        {"role": "tool", "tool_call_id": "c2", "content": "ok"},
        {"role": "assistant", "content": "Refunded 30 EUR on order 42."},
    ]
    return {"messages": messages, **extra}


def jsonl(*convs: Any) -> bytes:
    return "".join(json.dumps(c) + "\n" for c in convs).encode()


def head(repo: MemoryRepo) -> str:
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo.root, capture_output=True, text=True, check=True
    ).stdout.strip()


def episode_files(repo: MemoryRepo) -> list[Path]:
    return sorted((repo.root / repo.episodes_rel).rglob("*.yaml"))


def assert_nothing_written(repo: MemoryRepo, before: str) -> None:
    assert head(repo) == before
    assert episode_files(repo) == []
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=repo.root,
        capture_output=True,
        text=True,
    ).stdout
    assert status == ""
    assert not list((repo.root / ".git").glob("scarwarden*.lock"))


def test_openai_chat_jsonl_one_episode_per_conversation_one_commit(cli: Any, tmp_path: Path) -> None:
    runs = tmp_path / "runs.jsonl"
    runs.write_bytes(
        jsonl(
            conversation(correction="Ask before refunding over 20 EUR", corrected_by="lead"),
            conversation("Cancel order 7"),
        )
    )
    before = subprocess.run(
        ["git", "rev-list", "--count", "HEAD"], cwd=cli.root, capture_output=True, text=True
    ).stdout
    result = cli(
        "episode", "import", "--format", "openai-chat", "--write-tool", "refund", str(runs), "--json"
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["conversations"] == 2 and len(out["added"]) == 2 and out["skipped"] == []
    first, second = out["episodes"]
    assert first["task"] == "Refund order 42"
    assert first["action"].splitlines() == [
        "2 tool call(s), 1 write(s):",
        '1. get_order({"order_id":42}) -> {"status": "delivered", "total": 30}',
        '2. [write] refund({"amount":30,"order_id":42}) -> ok',
    ]
    assert first["outcome"] == "Refunded 30 EUR on order 42."
    assert first["correction"] == "Ask before refunding over 20 EUR" and first["corrected_by"] == "lead"
    assert first["source"] == "correction"
    assert second["task"] == "Cancel order 7" and "correction" not in second  # never invented
    assert second["source"] == "import"
    after = subprocess.run(
        ["git", "rev-list", "--count", "HEAD"], cwd=cli.root, capture_output=True, text=True
    ).stdout
    assert int(after) == int(before) + 1  # one commit for the batch
    log = subprocess.run(
        ["git", "log", "-1", "--format=%B"], cwd=cli.root, capture_output=True, text=True
    ).stdout
    assert all(f"Scarwarden-Episode: {ep_id}" in log for ep_id in out["added"])


def test_same_file_twice_adds_nothing_and_says_so(cli: Any, tmp_path: Path) -> None:
    runs = tmp_path / "runs.jsonl"
    runs.write_bytes(jsonl(conversation(), conversation("Cancel order 7")))
    assert cli("episode", "import", "--format", "openai-chat", str(runs)).exit_code == 0
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cli.root, capture_output=True, text=True).stdout
    again = cli("episode", "import", "--format", "openai-chat", str(runs))
    assert again.exit_code == 0
    assert again.stdout == ""
    assert "Nothing added: all 2 conversation(s) are already in the ledger (imported before)" in again.stderr
    assert (
        subprocess.run(["git", "rev-parse", "HEAD"], cwd=cli.root, capture_output=True, text=True).stdout
        == commit
    )
    # one new conversation beside the two: only it is added
    runs.write_bytes(jsonl(conversation(), conversation("Cancel order 7"), conversation("Ship order 9")))
    third = cli("episode", "import", "--format", "openai-chat", str(runs))
    assert len(third.stdout.split()) == 1
    assert "Committed 1 episode(s) from 3 conversation(s); 2 already in the ledger" in third.stderr


def test_a_conversation_twice_in_one_file_is_one_episode(memory_repo: MemoryRepo) -> None:
    data = io.BytesIO(jsonl(conversation(), conversation("Cancel order 7"), conversation()))
    result = importer.import_file(memory_repo, data, "openai-chat", source="runs.jsonl")
    assert result.conversations == 3 and len(result.added) == 2
    assert result.repeated == [result.added[0].id] and result.skipped == []
    assert len(episode_files(memory_repo)) == 2


def test_a_json_list_of_messages_is_one_conversation_and_correction_flag(cli: Any, tmp_path: Path) -> None:
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps(conversation()["messages"]))
    had = episode_files_of(cli.root)
    result = cli(
        "episode",
        "import",
        "--format",
        "openai-chat",
        str(chat),
        "--correction",
        "Ask first",
        "--dry-run",
        "--json",
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["dry_run"] is True and out["conversations"] == 1
    assert out["episodes"][0]["correction"] == "Ask first"
    assert episode_files_of(cli.root) == had  # a dry run writes nothing


def episode_files_of(root: Path) -> list[Path]:
    return sorted((root / "memory" / "episodes").rglob("*.yaml"))


def test_an_empty_file_adds_nothing_and_says_so(cli: Any, tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text("[]\n")
    result = cli("episode", "import", "--format", "openai-chat", str(empty))
    assert result.exit_code == 0 and result.stdout == ""
    assert "Nothing added: the file holds no conversation" in result.stderr


def test_stable_ids_from_content(memory_repo: MemoryRepo) -> None:
    data = jsonl(conversation(), conversation("Cancel order 7"))
    one = importer.read_episodes(io.BytesIO(data), "openai-chat", "a")
    two = importer.read_episodes(
        io.BytesIO(data), "openai-chat", "b", importer.Options(at="2020-01-01T00:00:00Z")
    )
    assert [e["id"] for e in one] == [e["id"] for e in two]
    assert one[0]["id"] != one[1]["id"] and one[0]["id"].startswith("ep-") and len(one[0]["id"]) == 15


BAD_FIELD = "conversation 2: invalid conversation; nothing was written"


@pytest.mark.parametrize(
    ("conv", "message", "field"),
    [
        (
            {"messages": [{"role": "system", "content": "x"}, {"role": "assistant", "content": "hi"}]},
            "conversation 2: the conversation has no user message, so no task; nothing was written",
            None,
        ),
        (
            {"messages": [{"role": "user", "content": "x"}, {"role": "robot", "content": "beep"}]},
            "conversation 2: invalid conversation; nothing was written",
            "messages[1].role",
        ),
        (
            {
                "messages": [
                    {"role": "user", "content": "x"},
                    {"role": "assistant", "tool_calls": [call("c", "refund", "{order_id: 4")]},
                ]
            },
            "conversation 2: tool-call arguments are not valid JSON; nothing was written",
            "messages[1].tool_calls[0].function.arguments",
        ),
        # A field of the wrong type is refused, never dropped (a correction lost unseen).
        *(
            ({"messages": [{"role": "user", "content": "x"}], key: value}, BAD_FIELD, key)
            for key, value in (
                ("correction", 5),
                ("corrected_by", ["ann"]),
                ("agent", {"name": "a"}),
                ("tags", "refund"),
                ("reward", "1"),
                ("reward", True),
                ("reward", float("inf")),
            )
        ),
    ],
)
def test_bad_conversation_refuses_the_file(
    cli: Any, tmp_path: Path, conv: dict[str, Any], message: str, field: str | None
) -> None:
    runs = tmp_path / "runs.jsonl"
    runs.write_bytes(jsonl(conversation(), conv))
    had = episode_files_of(cli.root)
    before = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cli.root, capture_output=True, text=True).stdout
    result = cli("episode", "import", "--format", "openai-chat", str(runs))
    assert result.exit_code == ExitCode.CHECK_FAILED
    assert f"error: runs.jsonl: {message}" in result.stderr
    if field:
        assert f"field '{field}'" in result.stderr
    if "robot" in json.dumps(conv):
        assert "the roles are system, developer, user, assistant, tool, function" in result.stderr
    assert "Traceback" not in result.output
    assert (
        subprocess.run(["git", "rev-parse", "HEAD"], cwd=cli.root, capture_output=True, text=True).stdout
        == before
    )
    assert episode_files_of(cli.root) == had


def test_secret_in_tool_arguments_is_refused_naming_conversation_and_field(
    memory_repo: MemoryRepo, make_cli: Any, tmp_path: Path
) -> None:
    token = fake_secrets()["github-token"].split()[-1]
    leaky = conversation()
    leaky["messages"][4]["tool_calls"][0]["function"]["arguments"] = json.dumps(
        {"order_id": 42, "auth": token}
    )
    runs = tmp_path / "runs.jsonl"
    runs.write_bytes(jsonl(conversation("Cancel order 7"), leaky))
    before = head(memory_repo)
    result = make_cli(memory_repo.root)("episode", "import", "--format", "openai-chat", str(runs))
    assert result.exit_code == ExitCode.CHECK_FAILED
    assert "refused, a tool call's arguments hold a secret; nothing was written" in result.stderr
    assert (
        "runs.jsonl: conversation 2: field 'messages[4].tool_calls[0].function.arguments.auth'"
        in result.stderr
    )
    assert token not in result.output
    assert_nothing_written(memory_repo, before)


def test_an_allowed_fingerprint_is_not_refused() -> None:
    token = fake_secrets()["github-token"].split()[-1]
    leaky = conversation()
    leaky["messages"][4]["tool_calls"][0]["function"]["arguments"] = json.dumps({"auth": token})
    with pytest.raises(ValidationError) as caught:
        importer.read_episodes(io.BytesIO(jsonl(leaky)), "openai-chat", "runs.jsonl")
    hint = caught.value.problems[0].hint or ""
    fingerprint = hint.split("add '")[1].split("'")[0]
    allowed = importer.Options(allow=(fingerprint,))
    (episode,) = importer.read_episodes(io.BytesIO(jsonl(leaky)), "openai-chat", "runs.jsonl", allowed)
    assert episode["task"] == "Refund order 42"


def test_unknown_format_lists_the_formats(cli: Any, tmp_path: Path) -> None:
    runs = tmp_path / "runs.jsonl"
    runs.write_bytes(jsonl(conversation()))
    result = cli("episode", "import", "--format", "langchain", str(runs))
    assert result.exit_code == ExitCode.USAGE
    assert "'langchain' is not one of 'openai-chat', 'tau-bench'" in result.output


def test_correction_for_a_conversation_the_file_lacks(cli: Any, tmp_path: Path) -> None:
    runs = tmp_path / "runs.jsonl"
    runs.write_bytes(jsonl(conversation()))
    had = episode_files_of(cli.root)
    result = cli("episode", "import", "--format", "openai-chat", str(runs), "--correction", "3:Ask first")
    assert result.exit_code == ExitCode.USAGE
    assert "--correction for conversation 3, but the file holds 1; nothing was written" in result.stderr
    assert episode_files_of(cli.root) == had


def test_large_file_streamed_in_bounded_memory(tmp_path: Path) -> None:
    """A 50 MB file is read a conversation at a time: peak memory stays far below it."""
    one = conversation()
    one["messages"][3]["content"] = "x" * 50_000  # a long tool result (summarised)
    line = json.dumps(one)
    big = tmp_path / "big.json"
    with big.open("w") as out:
        out.write("[")
        count = 50 * 1024 * 1024 // len(line) + 1
        for i in range(count):
            out.write(("," if i else "") + line)
        out.write("]")
    assert big.stat().st_size > 50 * 1024 * 1024
    tracemalloc.start()
    with big.open("rb") as data:
        seen = sum(1 for _ in importer.conversations(data, "openai-chat", "big.json"))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert seen == count
    assert peak < 8 * 1024 * 1024, peak


def test_past_the_size_caps_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream, "MAX_ITEM_BYTES", 1024)
    data = json.dumps([conversation(), {"messages": [{"role": "user", "content": "y" * 5000}]}]).encode()
    with pytest.raises(ValidationError) as caught:
        list(stream.items(io.BytesIO(data), "huge.json"))
    assert caught.value.message.startswith("huge.json: item 2 is over the 1 KiB cap (at least 5,")
    one_line = json.dumps({"messages": [{"role": "user", "content": "y" * 5000}]}).encode()  # no line break
    with pytest.raises(ValidationError) as caught:
        list(stream.items(io.BytesIO(b"\n\n" + one_line), "huge.jsonl"))
    assert caught.value.message.startswith("huge.jsonl: line 3 is over the 1 KiB cap (at least 1,026 bytes)")
    monkeypatch.setattr(stream, "MAX_FILE_BYTES", 2048)
    with pytest.raises(ValidationError) as caught:
        list(stream.items(io.BytesIO(jsonl(*[conversation()] * 10)), "huge.jsonl"))
    assert "huge.jsonl: the file is over" in caught.value.message
    assert caught.value.hint and "split the file" in caught.value.hint


@pytest.mark.skipif(not TAU.is_file(), reason="the tau-airline dataset is not on this machine")
def test_tau_bench_gives_the_replay_benchmarks_episodes() -> None:
    """Field by field, the episodes bench/replay_data.py records (with the same ``at``)."""
    sys.path.insert(0, str(BENCH))
    try:
        import replay_data
    finally:
        sys.path.remove(str(BENCH))
    at = "2026-01-01T00:00:00Z"
    with TAU.open("rb") as data:
        mine = importer.read_episodes(
            data, "tau-bench", TAU.name, importer.Options(agent="gpt-4o-airline", at=at)
        )
    runs = replay_data.load_runs(TAU.parent)
    assert len(mine) == len(runs) == 200
    for ours, run in zip(mine, runs, strict=True):
        assert {k: v for k, v in ours.items() if k != "id"} == replay_data.episode_of(run, at)
    assert len({e["id"] for e in mine}) == 200
    # Pinned: the episodes the replay's published figures were measured on (before the
    # converter moved into the package); a change here moves docs/replay.md's figures.
    plain = [{k: v for k, v in e.items() if k != "id"} for e in mine]
    text = json.dumps(plain, sort_keys=True, ensure_ascii=False).encode()
    assert hashlib.sha256(text).hexdigest() == REPLAY_EPISODES_SHA256


@pytest.mark.skipif(not TAU.is_file(), reason="the tau-airline dataset is not on this machine")
def test_tau_bench_import_under_ten_seconds(memory_repo: MemoryRepo, make_cli: Any) -> None:
    started = time.perf_counter()
    result = make_cli(memory_repo.root)("episode", "import", "--format", "tau-bench", str(TAU))
    elapsed = time.perf_counter() - started
    assert result.exit_code == 0, result.output
    assert "Committed 200 episode(s) from 200 conversation(s)" in result.stderr
    assert len(episode_files(memory_repo)) == 200
    assert elapsed < 10, elapsed
    text = episode_files(memory_repo)[0].read_text()
    assert "agent: gpt-4o-airline" in text  # the file's name
    again = make_cli(memory_repo.root)("episode", "import", "--format", "tau-bench", str(TAU))
    assert "Nothing added: all 200 conversation(s)" in again.stderr


def test_a_bar_on_a_terminal_and_none_with_json(memory_repo: MemoryRepo, tmp_path: Path) -> None:
    runs = tmp_path / "runs.jsonl"
    runs.write_bytes(jsonl(*(conversation(f"Refund order {n}") for n in range(30))))
    argv = [sys.executable, "-m", "scarwarden", "-C", str(memory_repo.root), "episode", "import"]
    code, text, _ = run_on_terminal(
        [*argv, "--format", "openai-chat", str(runs)], prompt=b"\0never", answer=b""
    )
    assert code == 0, text
    assert re.search(r"importing runs\s+\[#+\]\s+100%", text), text
    assert "Committed 30 episode(s) from 30 conversation(s)" in text
    runs.write_bytes(jsonl(conversation("One more")))
    code, text, _ = run_on_terminal(
        [*argv, "--format", "openai-chat", str(runs), "--json"], prompt=b"\0never", answer=b""
    )
    assert code == 0 and "importing runs" not in text
    assert json.loads(text.replace("\r\n", "\n"))["conversations"] == 1


@pytest.mark.parametrize(("record", "said"), [([[]], "got list"), ([{"task_id": []}], "missing")])
def test_a_tau_bench_line_that_is_no_record_says_so(cli: Any, tmp_path: Path, record: Any, said: str) -> None:
    runs = tmp_path / "results.json"
    runs.write_text(json.dumps(record))
    result = cli("episode", "import", "--format", "tau-bench", str(runs))
    assert result.exit_code == ExitCode.CHECK_FAILED
    assert "not a tau-bench record" in result.stderr and said in result.stderr
    assert "list indices" not in result.stderr and "Traceback" not in result.output


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [("task_id", "x", "task_id"), ("trial", "first", "trial"), ("reward", "high", "reward")],
)
def test_a_tau_bench_field_with_a_wrong_value_is_named_not_taken_for_bad_arguments(
    cli: Any, tmp_path: Path, field: str, value: str, said: str
) -> None:
    """It said "a tool call's arguments are not valid JSON (invalid literal for int()
    with base 10: 'x')" of a record whose task_id was "x", and whose calls were fine."""
    record = {"task_id": 3, "trial": 0, "reward": 1.0, "traj": []}
    record["info"] = {"task": {"instruction": "Book a flight to Boston", "actions": []}}
    runs = tmp_path / "results.json"
    runs.write_text(json.dumps([{**record, field: value}]))
    result = cli("episode", "import", "--format", "tau-bench", str(runs))
    assert result.exit_code == ExitCode.CHECK_FAILED
    assert (
        f"error: results.json: conversation 1: not a tau-bench record ('{said}' must be a number, "
        f"got {value!r}); nothing was written"
    ) in result.stderr
    assert "arguments" not in result.stderr


def test_an_import_killed_before_its_commit_is_imported_whole_by_the_rerun(
    memory_repo: MemoryRepo, tmp_path: Path
) -> None:
    """A run killed with every file written (its pre-commit hook kills it) leaves them
    untracked, with the write journal. The re-run counted them "already in the ledger
    (imported before)", skipped them, then rolled them back under the lock: "Committed
    1 episode(s) from 3 conversation(s); 2 already in the ledger", two runs lost."""
    root = memory_repo.root
    runs = tmp_path / "runs.jsonl"
    runs.write_bytes(jsonl(*(conversation(f"Refund order {n}") for n in range(3))))
    pid_file = tmp_path / "import.pid"
    hook = root / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\nwhile [ ! -s {pid_file} ]; do sleep 0.05; done\nkill -9 $(cat {pid_file})\n")
    hook.chmod(0o755)
    before = head(memory_repo)
    argv = [sys.executable, "-m", "scarwarden", "episode", "import", "--format", "openai-chat", str(runs)]
    killed = subprocess.Popen(argv, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    pid_file.write_text(str(killed.pid))
    killed.communicate(timeout=60)
    assert killed.returncode == -9
    assert head(memory_repo) == before and len(episode_files(memory_repo)) == 3  # written, not committed
    hook.unlink()

    dry = subprocess.run([*argv, "--dry-run"], cwd=root, capture_output=True, text=True)
    assert dry.stderr.strip() == "Would add 3 episode(s) from 3 conversation(s)"
    rerun = subprocess.run(argv, cwd=root, capture_output=True, text=True)
    assert rerun.returncode == 0, rerun.stderr
    assert rerun.stderr.strip() == "Committed 3 episode(s) from 3 conversation(s)"
    committed = subprocess.run(
        ["git", "show", "--name-only", "--format=", "HEAD"], cwd=root, capture_output=True, text=True
    ).stdout
    assert committed.count(".yaml") == 3
    status = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True)
    assert status.stdout == ""


def test_an_invalid_or_leaky_episode_is_named_by_its_conversation(cli: Any, tmp_path: Path) -> None:
    """The episode's own checks ran on the batch of new episodes: a problem said
    "(item 1)" of the file's conversation 3 when 1 and 2 were imported before, and a
    secret in a message named the episode's derived ID ("runs.jsonl (ep-4ngds6qb81gz)"),
    which the file does not hold."""
    first = tmp_path / "first.jsonl"
    first.write_bytes(jsonl(conversation("Cancel order 1"), conversation("Cancel order 2")))
    assert cli("episode", "import", "--format", "openai-chat", str(first)).exit_code == 0
    nul = conversation("Cancel order 3")
    nul["messages"][3]["content"] = "delivered\x00"
    runs = tmp_path / "runs.jsonl"
    runs.write_bytes(jsonl(conversation("Cancel order 1"), conversation("Cancel order 2"), nul))
    had = episode_files_of(cli.root)
    result = cli("episode", "import", "--format", "openai-chat", str(runs))
    assert result.exit_code == ExitCode.CHECK_FAILED
    assert "runs.jsonl: conversation 3: field 'action': holds a NUL character" in result.stderr
    assert "(item" not in result.stderr
    token = fake_secrets()["github-token"].split()[-1]
    runs.write_bytes(jsonl(conversation("Cancel order 5"), conversation(f"Deploy with {token}")))
    result = cli("episode", "import", "--format", "openai-chat", str(runs), "--dry-run")
    assert result.exit_code == ExitCode.CHECK_FAILED
    assert "error: runs.jsonl: refused, it holds a secret; nothing was written" in result.stderr
    assert "runs.jsonl: conversation 2: field 'task': holds a secret: GitHub token" in result.stderr
    assert token not in result.output and "(ep-" not in result.stderr
    assert episode_files_of(cli.root) == had


def test_a_pretty_printed_conversation_gets_a_hint_to_list_it(cli: Any, tmp_path: Path) -> None:
    """One conversation saved with json.dump(..., indent=2) was refused as "line 1 is not
    valid JSON ... Expecting property name enclosed in double quotes", with no word of
    what the reader wanted (one conversation a line) or that a list may span lines."""
    runs = tmp_path / "chat.json"
    runs.write_text(json.dumps(conversation(), indent=2))
    result = cli("episode", "import", "--format", "openai-chat", str(runs), "--dry-run")
    assert result.exit_code == ExitCode.CHECK_FAILED
    assert "error: chat.json: line 1 is not valid JSON; nothing was written" in result.stderr
    assert (
        "hint: JSON lines hold one whole JSON value a line; a conversation or record written "
        "over several lines goes in a JSON list: [{...}]"
    ) in result.stderr
    runs.write_text(json.dumps([conversation()], indent=2))  # as the hint says
    result = cli("episode", "import", "--format", "openai-chat", str(runs), "--dry-run")
    assert result.exit_code == 0 and "Would add 1 episode(s) from 1 conversation(s)" in result.stderr
