"""``episode import``'s doors: two imports at once, files that are no regular file, bytes
that are not UTF-8. Real repositories, real processes; nothing is lost, nothing doubled."""

from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from terminal import run_on_terminal

from scarwarden.errors import ExitCode, ValidationError
from scarwarden.files.atomic import write_lock
from scarwarden.files.transcripts import stream
from scarwarden.repo import MemoryRepo


def jsonl(*tasks: str) -> bytes:
    convs = [
        {"messages": [{"role": "user", "content": t}, {"role": "assistant", "content": "done"}]}
        for t in tasks
    ]
    return "".join(json.dumps(c) + "\n" for c in convs).encode()


def import_argv(repo: MemoryRepo, path: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "scarwarden",
        "-C",
        str(repo.root),
        "episode",
        "import",
        "--format",
        "openai-chat",
        str(path),
    ]


def waiting_on(lock: Path, count: int, procs: list[subprocess.Popen[bytes]]) -> None:
    """Until ``count`` processes wait for the flock on ``lock`` (/proc/locks shows each
    waiter as "->"), or one of ``procs`` ends early."""
    st = lock.stat()
    inode = f" {os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino} "
    while True:
        text = Path("/proc/locks").read_text()
        if sum(1 for line in text.splitlines() if "->" in line and inode in line) >= count:
            return
        assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        os.sched_yield()


def ledger(repo: MemoryRepo) -> list[str]:
    return sorted(p.stem for p in (repo.root / repo.episodes_rel).rglob("*.yaml"))


def test_two_imports_at_once_each_run_once_in_the_ledger(memory_repo: MemoryRepo, tmp_path: Path) -> None:
    """Both looked the file's IDs up before either wrote; the second then waited for the
    write lock and was refused "episode ep-... already exists in the ledger" (exit 1),
    its own new conversation (order 3) left out. Here both wait on the lock the test
    holds, so both look up before either writes."""
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    one.write_bytes(jsonl("Refund order 1", "Refund order 2"))
    two.write_bytes(jsonl("Refund order 2", "Refund order 3"))
    commits = int(
        subprocess.run(
            ["git", "rev-list", "--count", "HEAD"], cwd=memory_repo.root, capture_output=True, text=True
        ).stdout
    )
    with write_lock(memory_repo):
        procs = [
            subprocess.Popen(import_argv(memory_repo, f), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for f in (one, two)
        ]
        waiting_on(memory_repo.state_dir / "write.lock", 2, procs)
    outs: list[Any] = [p.communicate(timeout=60) for p in procs]
    said = sorted(err.decode().strip() for _, err in outs)
    assert [p.returncode for p in procs] == [0, 0], said
    assert said == [
        "Committed 1 episode(s) from 2 conversation(s); 1 already in the ledger (imported before), "
        "not added again",
        "Committed 2 episode(s) from 2 conversation(s)",
    ], said
    assert len(ledger(memory_repo)) == 3
    assert sorted(line for out, _ in outs for line in out.decode().split()) == ledger(memory_repo)
    after = subprocess.run(
        ["git", "rev-list", "--count", "HEAD"], cwd=memory_repo.root, capture_output=True, text=True
    )
    assert int(after.stdout) == commits + 2
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=memory_repo.root, capture_output=True, text=True
    )
    assert status.stdout == ""


def test_a_conversation_another_write_has_not_committed_yet_is_not_taken_as_imported(
    memory_repo: MemoryRepo, tmp_path: Path
) -> None:
    """The import looked its IDs up before it took the write lock: another write's file,
    written but not yet committed, counted as imported before, and that write undone
    (its gate refused, or it was killed), the conversation was in neither run."""
    runs = tmp_path / "runs.jsonl"
    runs.write_bytes(jsonl("Refund order 1", "Refund order 2"))
    dry = subprocess.run([*import_argv(memory_repo, runs), "--dry-run"], capture_output=True, text=True)
    ids = dry.stdout.split()
    assert len(ids) == 2, dry
    month = memory_repo.root / memory_repo.episodes_rel / "2026" / "12"
    with write_lock(memory_repo):  # the other write: its file is there, its commit not yet
        month.mkdir(parents=True, exist_ok=True)
        theirs = month / f"{ids[1]}.yaml"
        theirs.write_text("written by another write, not yet committed\n")
        proc = subprocess.Popen(
            import_argv(memory_repo, runs), stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        waiting_on(memory_repo.state_dir / "write.lock", 1, [proc])
        theirs.unlink()  # that write is undone
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert err.decode().strip() == "Committed 2 episode(s) from 2 conversation(s)"
    assert ledger(memory_repo) == sorted(ids)


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b"\xef\xbb", "line 1 is not UTF-8 (byte 0xEF at offset 0)"),  # a byte order mark cut short
        (b"\xef", "line 1 is not UTF-8 (byte 0xEF at offset 0)"),
        (b"\xef\xbb\xbf\xef\xbb", "line 1 is not UTF-8 (byte 0xEF at offset 3)"),
        (b"\xef[]", "line 1 is not UTF-8 (byte 0xEF at offset 0)"),  # its '[' was dropped
        (b"\n" + jsonl("Refund order 1") + b"\xff\n", "line 3 is not UTF-8 (byte 0xFF at offset "),
        (
            b'[{"messages": [{"role": "user", "content": "caf\xe9"}]}]',
            "the file is not UTF-8 (byte 0xE9 at offset 47)",
        ),
    ],
)
def test_bytes_that_are_not_utf8_are_named_with_their_offset(
    cli: Any, tmp_path: Path, data: bytes, said: str
) -> None:
    """A file of only EF BB (a UTF-8 byte order mark cut short) said "Nothing added:
    the file holds no conversation" (exit 0): three bytes after an EF were skipped
    unread, whatever they were."""
    runs = tmp_path / "runs.json"
    runs.write_bytes(data)
    had = ledger_of(cli.root)
    result = cli("episode", "import", "--format", "openai-chat", str(runs))
    assert result.exit_code == ExitCode.CHECK_FAILED, result.output
    assert f"error: runs.json: {said}" in result.stderr
    assert "nothing was written" in result.stderr and "hint: save the file as UTF-8" in result.stderr
    assert ledger_of(cli.root) == had


@pytest.mark.parametrize(
    ("data", "said", "hint"),
    [
        (
            "[]".encode("utf-16"),
            "is UTF-16 (its byte order mark says so), not UTF-8",
            "iconv -f UTF-16 -t UTF-8",
        ),
        # mtime=0: the header holds the time, and xdist's workers must collect the same IDs.
        (gzip.compress(jsonl("Refund order 1"), mtime=0), "is gzip-compressed", "gunzip -c runs.json |"),
    ],
    ids=["utf-16", "gzip"],
)
def test_a_utf16_or_gzip_file_is_named_for_what_it_is(
    cli: Any, tmp_path: Path, data: bytes, said: str, hint: str
) -> None:
    """Both were "line 1 is not UTF-8", with nothing on how to read them."""
    runs = tmp_path / "runs.json"
    runs.write_bytes(data)
    result = cli("episode", "import", "--format", "openai-chat", str(runs))
    assert result.exit_code == ExitCode.CHECK_FAILED, result.output
    assert f"error: runs.json {said}; nothing was written" in result.stderr
    assert hint in result.stderr


def ledger_of(root: Path) -> list[Path]:
    return sorted((root / "memory" / "episodes").rglob("*.yaml"))


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_is_refused_before_a_byte_is_read(cli: Any, device: str) -> None:
    """/dev/zero was read (8 MiB) and refused as "zero: line 1 is over the 8,192 KiB cap",
    /dev/urandom as "line 1 is not UTF-8" (exit 1): a device is no file of runs."""
    had = ledger_of(cli.root)
    result = cli("episode", "import", "--format", "openai-chat", device)
    assert result.exit_code == ExitCode.USAGE, result.output
    assert f"'{device}': not a regular file or a pipe (a character device)" in result.stderr
    assert "a pipe, or '-' for stdin" in result.stderr
    assert ledger_of(cli.root) == had


@pytest.mark.parametrize(
    "data",
    [b" " * 5000, b"[]" + b"\n" * 5000, b"\xef\xbb\xbf" * 2000, b"[1]\n" + b"\n" * 5000 + b"[2]"],
)
def test_endless_blanks_are_read_no_further_than_the_cap(
    monkeypatch: pytest.MonkeyPatch, data: bytes
) -> None:
    """Blanks before the first value or after the array's end were read without count:
    `yes '' | scarwarden episode import -` read for ever."""
    monkeypatch.setattr(stream, "MAX_FILE_BYTES", 2048)
    with pytest.raises(ValidationError) as caught:
        list(stream.items(io.BytesIO(data), "<stdin>"))
    assert caught.value.message.startswith("<stdin>: the file is over the 2 KiB cap"), caught.value.message


def test_a_fifo_is_read_as_its_writer_writes_and_says_it_waits(
    memory_repo: MemoryRepo, tmp_path: Path
) -> None:
    """A FIFO (a named pipe, like stdin) is a fair input: the import waits for its writer,
    and on a terminal says so (it waited in silence)."""
    fifo = tmp_path / "runs.fifo"
    os.mkfifo(fifo)

    def write() -> None:
        with fifo.open("wb") as out:  # waits for the import to open it
            out.write(jsonl("Refund order 1"))

    writer = threading.Thread(target=write)
    writer.start()
    code, text, _ = run_on_terminal(import_argv(memory_repo, fifo), prompt=b"\0never", answer=b"")
    writer.join(timeout=60)
    assert code == 0, text
    assert "Waiting for a writer on the FIFO runs.fifo; Ctrl-C stops." in text
    assert "Committed 1 episode(s) from 1 conversation(s)" in text
    assert len(ledger(memory_repo)) == 1


def test_a_process_substitution_is_named_a_pipe_not_its_descriptor(memory_repo: MemoryRepo) -> None:
    """`episode import --format tau-bench <(gunzip -c log.json.gz)` recorded every
    episode's agent as "63" (the name of /dev/fd/63, taken for the log's file name), for
    good in an append-only ledger; its errors said "63: line 1 ..."."""
    record = {"task_id": 3, "trial": 0, "reward": 1.0, "traj": []}
    record["info"] = {"task": {"instruction": "Book a flight to Boston", "actions": []}}

    def run(data: bytes, fmt: str) -> subprocess.CompletedProcess[str]:
        read, write = os.pipe()
        argv = import_argv(memory_repo, Path(f"/dev/fd/{read}"))
        argv[-2] = fmt
        with subprocess.Popen(
            [*argv, "--dry-run", "--json"],
            pass_fds=(read,),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ) as proc:
            os.close(read)
            with open(write, "wb") as out:
                out.write(data)
            stdout, stderr = proc.communicate(timeout=60)
        return subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)

    done = run(json.dumps([record]).encode(), "tau-bench")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["episodes"][0]["agent"] == "tau-bench"
    bad = run(b"{bad\n", "openai-chat")
    assert bad.returncode == ExitCode.CHECK_FAILED
    assert bad.stderr.startswith("error: <pipe>: line 1 is not valid JSON"), bad.stderr


def test_a_character_cut_short_after_the_array_is_not_utf8(cli: Any, tmp_path: Path) -> None:
    """The first byte of a two-byte character after the array's ']' (a copy cut short)
    was held back by the decoder and never judged: "Nothing added", exit 0."""
    runs = tmp_path / "runs.json"
    runs.write_bytes(b"[]\xc3")
    result = cli("episode", "import", "--format", "openai-chat", str(runs))
    assert result.exit_code == ExitCode.CHECK_FAILED, result.output
    assert "error: runs.json: the file is not UTF-8 (byte 0xC3 at offset 2)" in result.stderr


@pytest.mark.parametrize("listed", ["get_order", {"function": {"name": "get_order", "arguments": "{}"}}])
def test_tool_calls_that_are_no_list_are_named_so(cli: Any, tmp_path: Path, listed: Any) -> None:
    """tool_calls given as text or as one call were walked character by character (or key
    by key): "a tool call has no name", of calls that had one, or none at all."""
    conv = {"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "tool_calls": listed}]}
    runs = tmp_path / "runs.jsonl"
    runs.write_text(json.dumps(conv) + "\n")
    result = cli("episode", "import", "--format", "openai-chat", str(runs))
    assert result.exit_code == ExitCode.CHECK_FAILED, result.output
    assert "error: runs.jsonl: conversation 1: invalid conversation; nothing was written" in result.stderr
    assert "field 'messages[1].tool_calls': must be a list of tool calls" in result.stderr


def test_user_messages_without_text_are_not_called_missing(cli: Any, tmp_path: Path) -> None:
    """A conversation whose one user message is an image (or blank) was refused as
    "the conversation has no user message", which it has."""
    image = [{"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}]
    conv = {"messages": [{"role": "user", "content": image}, {"role": "assistant", "content": "A cat."}]}
    runs = tmp_path / "runs.jsonl"
    runs.write_text(json.dumps(conv) + "\n")
    result = cli("episode", "import", "--format", "openai-chat", str(runs))
    assert result.exit_code == ExitCode.CHECK_FAILED, result.output
    assert (
        "error: runs.jsonl: conversation 1: its user messages hold no text, so no task; nothing was written"
    ) in result.stderr
