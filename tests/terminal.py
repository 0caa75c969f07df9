"""Run a command on a real pseudo-terminal and answer its prompts (for interactive tests)."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time
from collections.abc import Sequence


def run_on_terminal(
    argv: Sequence[str], prompt: bytes, answer: bytes, timeout: float = 60
) -> tuple[int, str, bool]:
    """Run ``argv`` with a pty as stdin/stdout/stderr; type ``answer`` once ``prompt``
    appears. Returns (exit code, everything printed, whether the prompt was answered)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        list(argv), stdin=slave, stdout=slave, stderr=slave, env=dict(os.environ, NO_COLOR="1")
    )
    os.close(slave)
    output, answered = b"", False
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # the child closed the terminal (Linux: EIO)
                    break
                if not chunk:
                    break
                output += chunk
            if not answered and prompt in output:
                os.write(master, answer)
                answered = True
            if proc.poll() is not None and not ready:
                break
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        os.close(master)
    return proc.returncode, output.decode("utf-8", "replace"), answered
