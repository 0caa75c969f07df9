"""``episode import`` in bounded memory: one huge conversation, the ``--json`` output.

Memory is measured in-process with ``tracemalloc`` (what Python allocates), on real
files; the figures of a whole import (a child process's peak) are bench/import_memory.py's.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from fake_secrets import fake_secrets

from scarwarden.cli.output import json_text
from scarwarden.errors import ValidationError
from scarwarden.files.transcripts import importer
from scarwarden.repo import MemoryRepo

#: One time for every episode read (else "now", which may tick between two reads).
AT = importer.Options(at="2026-01-02T03:04:05Z")


def huge_conversation(path: Path, megabytes: float) -> list[dict[str, Any]]:
    """One conversation written as a single JSON list of ~1 KB messages; its first
    and last few messages are returned (the middle is only on disk)."""
    head = [{"role": "user", "content": "Reconcile the ledger"}]
    tail = [{"role": "assistant", "content": "Reconciled."}]
    with path.open("w") as out:
        out.write("[" + json.dumps(head[0]))
        n = 0
        while out.tell() < megabytes * 1024 * 1024:
            call = {"id": f"c{n}", "function": {"name": "read_page", "arguments": json.dumps({"page": n})}}
            out.write(",\n" + json.dumps({"role": "assistant", "content": None, "tool_calls": [call]}))
            out.write(",\n" + json.dumps({"role": "tool", "tool_call_id": f"c{n}", "content": "row " * 250}))
            n += 1
        out.write(",\n" + json.dumps(tail[0]) + "]\n")
    return head + tail


def test_one_huge_conversation_is_read_in_bounded_memory(tmp_path: Path) -> None:
    """A file that is one list of messages (the whole file one conversation) was held
    whole: a 27 MB file took 349 MB. Its messages are now read one at a time. (4 MB:
    the old reader traced ~5.7 bytes per byte of file, 23 MB here, far past the bound.)"""
    path = tmp_path / "huge.json"
    huge_conversation(path, 4)
    tracemalloc.start()
    with path.open("rb") as data:
        (episode,) = importer.read_episodes(data, "openai-chat", "huge.json")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 6 * 1024 * 1024, peak
    assert episode["task"] == "Reconcile the ledger"
    assert episode["outcome"] == "Reconciled."
    assert episode["action"].startswith(f"{path.read_text().count('read_page')} tool call(s):\n1. read_page(")
    assert episode["action"].endswith("more call(s)")


def test_a_streamed_conversation_is_the_same_episode_as_one_line(tmp_path: Path) -> None:
    """The list of messages read one at a time makes the episode (and the ID) the same
    conversation on one JSON line makes, read whole."""
    path = tmp_path / "huge.json"
    huge_conversation(path, 0.5)
    messages = json.loads(path.read_text())
    with path.open("rb") as data:
        streamed = importer.read_episodes(data, "openai-chat", "huge.json", AT)
    line = io.BytesIO(json.dumps(messages).encode() + b"\n" + json.dumps([messages[0]]).encode())
    whole = importer.read_episodes(line, "openai-chat", "runs.jsonl", AT)
    assert streamed == whole[:1]
    assert streamed[0]["id"] == importer.stable_id("openai-chat", messages)


def peak_mb(argv: list[str], out: Path) -> tuple[int, float]:
    """Exit code and peak resident set (MB) of a real child process, stdout to ``out``."""
    with out.open("wb") as stdout:
        child = subprocess.Popen(argv, stdout=stdout, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
    return os.waitstatus_to_exitcode(status), usage.ru_maxrss / 1024


@pytest.mark.slow  # two real imports of 8 MB, in child processes: ~10 s
def test_json_output_is_written_an_episode_at_a_time(memory_repo: MemoryRepo, tmp_path: Path) -> None:
    """``--json`` built the whole document (every episode, as a dict, then as text)
    before printing it: ~3x the output's size on top of the import. It is now written
    an episode at a time; the document is the same."""
    runs = tmp_path / "runs.jsonl"
    with runs.open("w") as out:
        for n in range(800):
            task, reply = f"task {n} " + "t" * 7000, f"done {n} " + "d" * 3000
            out.write(
                json.dumps([{"role": "user", "content": task}, {"role": "assistant", "content": reply}])
            )
            out.write("\n")
    argv = [sys.executable, "-m", "scarwarden", "-C", str(memory_repo.root), "episode", "import"]
    argv += ["--format", "openai-chat", str(runs), "--dry-run", "--at", "2026-01-02T03:04:05Z"]
    code, plain = peak_mb(argv, tmp_path / "plain.out")
    assert code == 0
    code, as_json = peak_mb([*argv, "--json"], tmp_path / "json.out")
    assert code == 0
    document = json.loads((tmp_path / "json.out").read_text())
    assert (tmp_path / "json.out").stat().st_size > 7 * 1024 * 1024
    assert as_json < plain + 4, (plain, as_json)
    assert list(document) == [
        "conversations",
        "added",
        "skipped",
        "repeated",
        "dry_run",
        "commit",
        "episodes",
    ]
    assert document["conversations"] == 800 and document["dry_run"] is True and document["commit"] is None
    assert [ep["id"] for ep in document["episodes"]] == document["added"]
    assert document["episodes"][7]["task"].startswith("task 7 ttt")
    assert (tmp_path / "json.out").read_text() == json_text(document) + "\n"  # the one --json form


def test_json_of_a_refused_import_prints_no_document(cli: Any, tmp_path: Path) -> None:
    """Every refusal comes before the document's first byte: stdout is empty, the error
    on stderr (never half a document)."""
    runs = tmp_path / "runs.jsonl"
    runs.write_text('[{"role": "user", "content": "ok"}]\n[{"role": "robot", "content": "x"}]\n')
    result = cli("episode", "import", "--format", "openai-chat", str(runs), "--json")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "runs.jsonl: conversation 2: invalid conversation; nothing was written" in result.stderr


def test_json_of_an_import_that_adds_nothing(cli: Any, tmp_path: Path) -> None:
    runs = tmp_path / "runs.jsonl"
    runs.write_text('[{"role": "user", "content": "Refund order 42"}]\n')
    first = cli("episode", "import", "--format", "openai-chat", str(runs), "--json")
    again = cli("episode", "import", "--format", "openai-chat", str(runs), "--json")
    assert first.exit_code == again.exit_code == 0
    added = json.loads(first.stdout)
    assert len(added["episodes"]) == 1 and added["episodes"][0]["id"] == added["added"][0]
    assert first.stdout == json_text(added) + "\n"
    assert (
        again.stdout
        == json_text({**added, "added": [], "skipped": added["added"], "commit": None, "episodes": []}) + "\n"
    )


def test_a_conversation_of_many_bad_messages_names_the_first_few(tmp_path: Path) -> None:
    """Every bad message was a problem held and printed: 200,000 messages in an unknown
    role took 254 MB and printed 400,000 lines. The first few are named, the rest counted."""
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([{"role": "user", "content": "t"}] + [{"role": "robot"}] * 5000))
    with path.open("rb") as data, pytest.raises(ValidationError) as caught:
        importer.read_episodes(data, "openai-chat", "bad.json", AT)
    problems = caught.value.problems
    assert len(problems) <= 21
    assert problems[0].field == "messages[1].role" and problems[0].message == "unknown role 'robot'"
    assert problems[-1].message == f"and {5000 - len(problems) + 1:,} more problem(s) in later messages"


def test_a_file_of_many_refused_conversations_names_the_first_few(cli: Any, tmp_path: Path) -> None:
    """Every refused conversation was a problem held and printed: 20,000 conversations
    with a key in a tool call printed 40,000 lines (73 MB; a 256 MiB file, gigabytes).
    The first few are named, the rest counted; nothing is written."""
    key = fake_secrets()["aws-access-key-id"]
    runs, tagged = tmp_path / "runs.jsonl", tmp_path / "tagged.jsonl"
    with runs.open("w") as out, tagged.open("w") as bad:
        for n in range(300):
            args = json.dumps({"cmd": key, "n": n})
            run = [{"role": "user", "content": f"t{n}"}]
            run += [
                {
                    "role": "assistant",
                    "tool_calls": [{"id": "a", "function": {"name": "f", "arguments": args}}],
                }
            ]
            out.write(json.dumps(run) + "\n")
            bad.write(json.dumps({"messages": run[:1], "tags": [[n]]}) + "\n")
    had = sorted((cli.root / "memory").rglob("*.yaml"))
    for path, said in (
        (runs, "refused, a tool call's arguments hold a secret"),
        (tagged, "invalid episode input"),
    ):
        result = cli("episode", "import", "--format", "openai-chat", str(path))
        assert result.exit_code == 1
        assert f"{path.name}: {said}; nothing was written" in result.stderr
        named = [
            line for line in result.stderr.splitlines() if line.startswith(f"  {path.name}: conversation")
        ]
        assert 1 <= len(named) <= 20
        assert f"  {path.name}: and {300 - len(named):,} more problem(s)" in result.stderr
    assert sorted((cli.root / "memory").rglob("*.yaml")) == had
