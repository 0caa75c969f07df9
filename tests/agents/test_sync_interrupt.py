"""Ctrl-C stops a ``sync`` that waits on a remote which never answers: reading the
remote changes nothing here, so it need not run to its end as a rebase must."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading
import time

from conftest import git
from test_sync import add
from test_sync_refusals import snapshot

from scarwarden.repo import MemoryRepo


def silent_server() -> tuple[socket.socket, str]:
    """A server that accepts connections and never says a word (a hung forge)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                held.append(server.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    return server, f"http://127.0.0.1:{server.getsockname()[1]}/memory.git"


def test_ctrl_c_stops_a_sync_waiting_on_a_silent_remote(memory_repo: MemoryRepo) -> None:
    root = memory_repo.root
    add(memory_repo, 1, "a")
    server, url = silent_server()
    git(root, "remote", "add", "origin", url)
    before = snapshot(root)
    proc = subprocess.Popen(
        [sys.executable, "-m", "scarwarden", "sync"],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(2)  # started, and waiting on the remote
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)  # it waited on git, which waits for ever
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        server.close()
    assert proc.returncode == 1 and "Aborted!" in err and "Traceback" not in err
    assert snapshot(root) == before
    assert url not in subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
