"""``scarwarden mcp`` over pipes, as every MCP client runs it, stopped by a signal or by
a client that misbehaves: it ends promptly and cleanly, and loses nothing."""

from __future__ import annotations

import fcntl
import json
import os
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import git, head
from test_mcp_wire import INITIALIZE, RECORD_BEGUN, RECORDING, json_lines, start_server

from scarwarden.files.atomic import write_lock
from scarwarden.repo import MemoryRepo

pytest.importorskip("mcp")
pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="Linux pipes and signals")


#: Each signal that stops the server after the write in flight, its exit status and what
#: it says: SIGHUP (the terminal closed, an ssh session dropped, ``kill -HUP``) too.
STOP_SIGNALS = [
    (signal.SIGINT, 130, "interrupted"),
    (signal.SIGTERM, 143, "terminated"),
    (signal.SIGHUP, 129, "hung up"),
]


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize(
    ("signum", "status", "said"),
    STOP_SIGNALS,
)
def test_a_stop_signal_stops_the_server_after_the_write_in_flight(
    demo_repo: MemoryRepo, signum: int, status: int, said: str
) -> None:
    """SIGINT (Ctrl-C, a client stopping it) did nothing until the next line arrived on
    stdin: the SDK waits for a line in a worker thread, which the cancelled serving
    waited for. Now it ends with 130 once the tool running (a record_episode waiting for
    the ledger's lock, held here) has finished: its episode is committed whole. SIGTERM
    (the SDK's stdio client sends it ~2 s after closing stdin; supervisors and container
    runtimes stop services with it) ended the server outright, even mid-write; now as
    SIGINT, with 143 (128 + SIGTERM)."""
    before = head(demo_repo)
    proc = start_server(demo_repo)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    lines = RECORD_BEGUN
    try:
        with write_lock(demo_repo):
            proc.stdin.write(json_lines(lines))
            proc.stdin.flush()
            assert [json.loads(proc.stdout.readline())["id"] for _ in range(2)] == [0, 2]
            proc.send_signal(signum)
            time.sleep(1)  # the signal reaches the server while the write waits
            assert proc.poll() is None  # the write in flight holds the exit
        assert proc.wait(timeout=20) == status
    finally:
        _stop(proc)
    stderr = proc.stderr.read().decode()
    assert stderr.strip() == f"scarwarden mcp: {said}", stderr
    assert proc.stdout.read() == b""  # the interrupted call is not answered; nothing else is written
    assert head(demo_repo) != before
    assert git(demo_repo.root, "log", "-1", "--format=%s").stdout == "episode: refund a customer\n"
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""


def test_sigint_stops_a_server_whose_client_reads_no_answers(demo_repo: MemoryRepo) -> None:
    """A client that sent requests and reads none of the answers fills the stdout pipe;
    the SDK writes in a worker thread, which the cancelled serving waited for, so SIGINT
    did nothing until the client read. Now the server ends with 130; what it wrote is
    whole JSON-RPC lines, but for a last one cut after a second's wait for the client."""
    proc = start_server(demo_repo)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    read = {"uri": "scarwarden://playbook"}
    lines = [INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"}] + [
        {"jsonrpc": "2.0", "id": n, "method": "resources/read", "params": read} for n in range(1, 60)
    ]
    try:
        proc.stdin.write(json_lines(lines))
        proc.stdin.flush()
        _wait_until_full(proc.stdout.fileno())  # the answers are far more than the pipe holds
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 130
    finally:
        _stop(proc)
    stderr = proc.stderr.read().decode()  # the SDK may warn that an answer could not be written
    assert stderr.endswith("scarwarden mcp: interrupted\n") and "Traceback" not in stderr, stderr
    written = proc.stdout.read().split(b"\n")
    assert len(written) > 2
    ids = [json.loads(line)["id"] for line in written[:-1]]
    assert len(set(ids)) == len(ids) and set(ids) <= set(range(60)), ids  # whole answers, each once


@pytest.mark.parametrize(
    ("signum", "status", "said"),
    STOP_SIGNALS,
)
@pytest.mark.parametrize("burst", [0, 200])
def test_a_stop_signal_stops_a_server_idle_or_mid_burst(
    demo_repo: MemoryRepo, burst: int, signum: int, status: int, said: str
) -> None:
    """On Python 3.10 (setup.cfg: python_requires >= 3.10) any SIGINT ended the server
    with exit 1 and a traceback, "asyncio.exceptions.CancelledError": asyncio's runner
    (anyio's copy of 3.11's) turns its cancellation into a KeyboardInterrupt on 3.11
    only, and the interrupt's teardown errors were told from a crash with 3.11's
    Task.cancelling(). Run this file with a 3.10 interpreter to see it. SIGTERM, idle
    or mid-burst: exit 143, that one line on stderr, and whole JSON-RPC lines on stdout."""
    proc = start_server(demo_repo)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    recall = {"name": "recall", "arguments": {"task": "draft a launch post"}}
    lines = [INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"}] + [
        {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": recall} for n in range(1, burst + 1)
    ]
    try:
        proc.stdin.write(json_lines(lines))
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 0
        if burst:
            assert "id" in json.loads(proc.stdout.readline())  # the burst is being answered
        proc.send_signal(signum)
        assert proc.wait(timeout=20) == status
    finally:
        _stop(proc)
    stderr = proc.stderr.read().decode()
    assert stderr.endswith(f"scarwarden mcp: {said}\n"), stderr
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    if signum != signal.SIGINT:
        assert stderr == f"scarwarden mcp: {said}\n"
        for line in proc.stdout.read().splitlines():
            assert "id" in json.loads(line)


@pytest.mark.parametrize(
    ("after", "delay"),
    [
        ("scarwarden.cli.group", 0),  # click's group: the command line is being read
        ("scarwarden.cli.commands._common", 0),  # the command's module
        ("pydantic_core", 0),  # the SDK's import has begun
        ("mcp.types", 0),
        ("mcp.server.mcpserver", 0),
        ("scarwarden.agents.mcp.register", 0),
        ("scarwarden.agents.mcp.server", 0),  # then the server is built
        ("scarwarden.agents.mcp.server", 0.05),
        ("scarwarden.agents.mcp.streams", 0),  # serving has begun
    ],
)
def test_sigint_while_the_server_starts_exits_130(demo_repo: MemoryRepo, after: str, delay: float) -> None:
    """SIGINT in the first ~0.7 s (opening the memory, importing the SDK, building the
    server) printed click's "Aborted!" and exited 1, or 130 by the killed process's
    status; docs/commands.md says an interrupted MCP server exits 130. The interrupt is
    sent once Python says (-X importtime, on stderr) it has imported ``after``."""
    command = [sys.executable, "-X", "importtime", "-m", "scarwarden", "-C", str(demo_repo.root), "mcp"]
    pipe = subprocess.PIPE
    # Unbuffered: select() sees each line that is not read yet.
    proc = subprocess.Popen(command, stdin=pipe, stdout=pipe, stderr=pipe, bufsize=0)
    assert proc.stderr is not None
    said = []
    try:
        while (line := _line_of(proc.stderr)).rpartition("|")[2].strip() != after:
            said.append(line)
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 130, proc.stderr.read().decode()
    finally:
        _stop(proc)
    said += proc.stderr.read().decode().splitlines(keepends=True)
    stderr = "".join(line for line in said if not line.startswith("import time:"))
    assert stderr == "scarwarden mcp: interrupted\n", stderr


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
@pytest.mark.parametrize("when", ["starting", "serving"])
def test_a_stop_signal_ignored_by_who_started_the_server_stays_ignored(
    demo_repo: MemoryRepo, when: str, signum: int
) -> None:
    """A server started with SIGINT ignored (nohup, a background job of a script, which
    a Ctrl-C on the script must not stop) goes on serving through one, as Python's own
    handling (and asyncio's) leaves an ignored SIGINT ignored; so with SIGTERM ignored
    (nohup-like supervisors). It ends at the end of stdin with 0."""
    timed = ["-X", "importtime"] if when == "starting" else []
    command = [sys.executable, *timed, "-m", "scarwarden", "-C", str(demo_repo.root), "mcp"]
    pipe = subprocess.PIPE
    proc = subprocess.Popen(
        command,
        stdin=pipe,
        stdout=pipe,
        stderr=pipe,
        bufsize=0,
        preexec_fn=lambda: signal.signal(signum, signal.SIG_IGN),
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        if when == "starting":
            while _line_of(proc.stderr).rpartition("|")[2].strip() != "mcp.types":
                pass
        proc.send_signal(signum)
        proc.stdin.write(json_lines([INITIALIZE]))
        assert json.loads(proc.stdout.readline())["id"] == 0
        proc.send_signal(signum)
        time.sleep(0.5)
        assert proc.poll() is None
        proc.stdin.close()
        assert proc.wait(timeout=20) == 0
    finally:
        _stop(proc)


def _line_of(stream: Any) -> str:
    """The next line ``stream`` (a pipe) reads, within a minute."""
    ready, _, _ = select.select([stream], [], [], 60)
    assert ready, "nothing more was said"
    line = stream.readline().decode()
    assert line, "the process ended first"
    return line


#: fcntl's F_GETPIPE_SZ (Linux), which Python 3.10+ names on Linux only.
F_GETPIPE_SZ = getattr(fcntl, "F_GETPIPE_SZ", 1032)


def _unread(fd: int) -> int:
    """The bytes waiting in the pipe ``fd`` reads."""
    return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]


def _wait_until_full(fd: int) -> None:
    """Return once the pipe ``fd`` reads holds at least half its size and has not grown
    for half a second: the writer waits for a reader (a pipe is full when its pages are,
    and a page may hold less than its size)."""
    half = fcntl.fcntl(fd, F_GETPIPE_SZ) // 2
    deadline = time.monotonic() + 60
    last, since = -1, time.monotonic()
    while (unread := _unread(fd)) < half or unread != last or time.monotonic() - since < 0.5:
        assert time.monotonic() < deadline, "the answers never filled the pipe"
        if unread != last:
            last, since = unread, time.monotonic()
        time.sleep(0.05)


@pytest.mark.parametrize("second", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_second_stop_signal_ends_the_server_at_once(demo_repo: MemoryRepo, second: int) -> None:
    """Once SIGTERM has asked the server to stop, a second SIGTERM (or a SIGINT) ends
    it at once, as docs/mcp.md says, even with a write waiting (its lock held here)."""
    proc = start_server(demo_repo)
    assert proc.stdin is not None and proc.stdout is not None
    lines = RECORD_BEGUN
    try:
        with write_lock(demo_repo):
            proc.stdin.write(json_lines(lines))
            proc.stdin.flush()
            assert [json.loads(proc.stdout.readline())["id"] for _ in range(2)] == [0, 2]
            proc.send_signal(signal.SIGTERM)
            time.sleep(0.5)
            assert proc.poll() is None
            proc.send_signal(second)
            assert proc.wait(timeout=20) == -second
    finally:
        _stop(proc)


@pytest.mark.parametrize(("signum", "status", "said"), STOP_SIGNALS[1:])
@pytest.mark.parametrize(
    "after",
    [
        "scarwarden.errors",  # the console script's own imports: ended -15 (Python's default)
        "scarwarden.cli.output",
        "scarwarden.cli.group",
        "pydantic_core",
        "mcp.server.mcpserver",
        "scarwarden.agents.mcp.streams",
    ],
)
def test_sigterm_while_the_server_starts_exits_143(
    demo_repo: MemoryRepo, after: str, signum: int, status: int, said: str
) -> None:
    """SIGTERM in the first ~0.7 s ends the server as it would once serving: exit 143,
    'scarwarden mcp: terminated', nothing on stdout; SIGHUP the same with 129. While the
    console script imported its error boundary (scarwarden.errors, scarwarden.cli.output,
    ~20 ms) the handler was not yet installed: Python's default ended it, status -15."""
    command = [sys.executable, "-X", "importtime", "-m", "scarwarden", "-C", str(demo_repo.root), "mcp"]
    pipe = subprocess.PIPE
    proc = subprocess.Popen(command, stdin=pipe, stdout=pipe, stderr=pipe, bufsize=0)
    assert proc.stderr is not None and proc.stdout is not None
    lines = []
    try:
        while (line := _line_of(proc.stderr)).rpartition("|")[2].strip() != after:
            lines.append(line)
        proc.send_signal(signum)
        assert proc.wait(timeout=20) == status, proc.stderr.read().decode()
    finally:
        _stop(proc)
    lines += proc.stderr.read().decode().splitlines(keepends=True)
    stderr = "".join(line for line in lines if not line.startswith("import time:"))
    assert stderr == f"scarwarden mcp: {said}\n", stderr
    assert proc.stdout.read() == b""


def test_sigterm_to_the_process_group_during_a_slow_hook_commits_the_episode_whole(
    demo_repo: MemoryRepo, tmp_path: Path
) -> None:
    """The SDK's stdio client starts the server in a session of its own and stops it
    with SIGTERM to the whole process group (mcp/os/posix/utilities.py), as supervisors
    stopping a process group do: it reached the git processes and hooks of the write in
    flight too, so a record_episode caught in a slow pre-commit hook was undone, nothing
    committed ("the pre-commit hook refused the commit"). They now start in a session of
    their own: the hook finishes, the episode is committed whole, the server exits 143."""
    before = head(demo_repo)
    running = tmp_path / "hook-running"
    hooks = Path(git(demo_repo.root, "rev-parse", "--git-path", "hooks").stdout.strip())
    hooks = hooks if hooks.is_absolute() else demo_repo.root / hooks
    hooks.mkdir(parents=True, exist_ok=True)
    (hooks / "pre-commit").write_text(f"#!/bin/sh\n: > '{running}'\nsleep 1\nexit 0\n")
    (hooks / "pre-commit").chmod(0o755)
    command = [sys.executable, "-m", "scarwarden", "-C", str(demo_repo.root), "mcp"]
    pipe = subprocess.PIPE
    proc = subprocess.Popen(command, stdin=pipe, stdout=pipe, stderr=pipe, start_new_session=True)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    lines = RECORDING
    try:
        proc.stdin.write(json_lines(lines))
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 0
        deadline = time.monotonic() + 60
        while not running.exists():
            assert time.monotonic() < deadline and proc.poll() is None, "the hook never ran"
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGTERM)
        assert proc.wait(timeout=30) == 143
    finally:
        _stop(proc)
    stderr = proc.stderr.read().decode()
    assert stderr == "scarwarden mcp: terminated\n", stderr
    assert head(demo_repo) != before
    assert git(demo_repo.root, "log", "-1", "--format=%s").stdout == "episode: refund a customer\n"
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""


def test_a_client_that_closed_stderr_is_still_served(demo_repo: MemoryRepo) -> None:
    """A client that closed its end of the server's stderr (it reads none of the logs):
    the SDK logs each failed tool call there through rich, whose console answers a
    broken pipe with SystemExit(1), so the first tool error ended the server, exit 1,
    that call and every later one unanswered. Now the log goes quiet and serving goes on."""
    proc = start_server(demo_repo)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stderr.close()
    unknown = {"name": "get_rule", "arguments": {"rule_id": "PB-999"}}
    lines = [
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": unknown},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": unknown},
        {"jsonrpc": "2.0", "id": 3, "method": "ping"},
    ]
    try:
        proc.stdin.write(json_lines(lines))
        proc.stdin.close()
        replies = [json.loads(line) for line in proc.stdout.read().splitlines()]
        assert proc.wait(timeout=30) == 0
    finally:
        _stop(proc)
    by_id = {r["id"]: r for r in replies}
    assert sorted(by_id) == [0, 1, 2, 3] and len(replies) == 4, replies  # answered in any order
    assert by_id[1]["result"]["isError"] is True and "PB-999" in by_id[1]["result"]["content"][0]["text"]
