"""``episode import`` in bounded memory: one huge conversation, the ``--json`` output.

Memory is measured in-process with ``tracemalloc`` (what Python allocates), on real
files; the figures of a whole import (a child process's peak) are bench/import_memory.py's.
"""

from __future__ import annotations

import io
import json
import tracemalloc
from pathlib import Path
from typing import Any

from scarwarden.files.transcripts import importer

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
    whole: a 27 MB file took 349 MB. Its messages are now read one at a time."""
    path = tmp_path / "huge.json"
    huge_conversation(path, 12)
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
