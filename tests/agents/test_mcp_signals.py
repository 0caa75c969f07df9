"""``scarwarden mcp`` over pipes, as every MCP client runs it, stopped by a signal or by
a client that misbehaves: it ends promptly and cleanly, and loses nothing."""

from __future__ import annotations

import json
import signal
import subprocess
import time

import pytest
from conftest import git, head
from test_mcp_wire import INITIALIZE, RECORD, start_server

from scarwarden.files.atomic import write_lock
from scarwarden.repo import MemoryRepo

pytest.importorskip("mcp")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def test_sigint_stops_the_server_after_the_write_in_flight(demo_repo: MemoryRepo) -> None:
    """SIGINT (Ctrl-C, a client stopping it) did nothing until the next line arrived on
    stdin: the SDK waits for a line in a worker thread, which the cancelled serving
    waited for. Now it ends with 130 once the tool running (a record_episode waiting for
    the ledger's lock, held here) has finished: its episode is committed whole."""
    before = head(demo_repo)
    proc = start_server(demo_repo)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    lines = [
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": RECORD},
    ]
    try:
        with write_lock(demo_repo):
            proc.stdin.write(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
            proc.stdin.flush()
            assert json.loads(proc.stdout.readline())["id"] == 0
            proc.send_signal(signal.SIGINT)
            time.sleep(1)  # the signal reaches the server while the write waits
            assert proc.poll() is None  # the write in flight holds the exit
        assert proc.wait(timeout=20) == 130
    finally:
        _stop(proc)
    stderr = proc.stderr.read().decode()
    assert stderr.strip() == "scarwarden mcp: interrupted", stderr
    assert proc.stdout.read() == b""  # the interrupted call is not answered; nothing else is written
    assert head(demo_repo) != before
    assert git(demo_repo.root, "log", "-1", "--format=%s").stdout == "episode: refund a customer\n"
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""
