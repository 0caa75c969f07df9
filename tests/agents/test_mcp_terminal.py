"""``scarwarden mcp`` started by hand on a real terminal, its ``--help`` and the
configuration ``export mcp-config`` writes (issue 28, point 3)."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from conftest import git, head
from test_mcp_wire import RECORD, RECORD_BEGUN, RECORDING, json_lines, serve_lines

from scarwarden.files.atomic import write_lock
from scarwarden.repo import MemoryRepo

pytest.importorskip("mcp")


def _scarwarden() -> str:
    return str(Path(sys.executable).parent / "scarwarden")


def _read(master: int, seconds: float, until: bytes | None = None) -> bytes:
    out, deadline = b"", time.monotonic() + seconds
    while time.monotonic() < deadline and (until is None or until not in out):
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
    return out


def _served_on_a_terminal(repo: MemoryRepo) -> tuple[int, subprocess.Popen[bytes]]:
    """``scarwarden mcp`` with a pseudo-terminal as its stdin and controlling terminal
    (so a \\x03 typed on it is Ctrl-C's SIGINT to its process group), echo off so the
    requests typed are not written back, stdout and stderr piped; the terminal's master
    end and the process."""
    master, slave = pty.openpty()
    attrs = termios.tcgetattr(slave)
    attrs[3] &= ~termios.ECHO
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    proc = subprocess.Popen(
        [sys.executable, "-m", "scarwarden", "-C", str(repo.root), "mcp"],
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),
    )
    os.close(slave)
    return master, proc


def test_on_a_terminal_it_says_what_it_is_and_ends_on_ctrl_c(demo_repo: MemoryRepo) -> None:
    """A real Ctrl-C: the pty is the server's controlling terminal, so typing \\x03 sends
    SIGINT to it as a shell would (was: ignored once, then 'Aborted!' and a hang)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [_scarwarden(), "-C", str(demo_repo.root), "mcp"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
        preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),
        env=dict(os.environ, NO_COLOR="1"),
    )
    os.close(slave)
    try:
        banner = _read(master, 60, until=b"Ctrl-D ends it.").decode()
        assert f"the memory in {demo_repo.root} as an MCP server" in banner
        assert "scarwarden export mcp-config" in banner
        assert f"claude mcp add scarwarden -- {_scarwarden()} mcp --repo {demo_repo.root}" in banner
        os.write(master, b"\x03")
        proc.wait(timeout=20)
        rest = _read(master, 2).decode()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    assert proc.returncode == 130  # 128 + SIGINT, as over pipes (was 0)
    assert "scarwarden mcp: stopped" in rest and "Aborted" not in rest and "Traceback" not in rest


def test_ctrl_c_on_a_terminal_lets_the_write_in_flight_finish(demo_repo: MemoryRepo) -> None:
    """Ctrl-C on a terminal ended the process at once (os._exit(0)), even with a
    record_episode mid-way (here waiting for the ledger's lock): its episode was left
    for the next write to repair and the exit status said success. Now as over pipes:
    the write finishes, committed whole, then the server exits 130."""
    before = head(demo_repo)
    master, proc = _served_on_a_terminal(demo_repo)
    assert proc.stdout is not None and proc.stderr is not None
    lines = RECORD_BEGUN
    try:
        with write_lock(demo_repo):
            os.write(master, json_lines(lines))
            assert [json.loads(proc.stdout.readline())["id"] for _ in range(2)] == [0, 2]
            os.write(master, b"\x03")
            time.sleep(1)  # the interrupt reaches the server while the write waits
            assert proc.poll() is None  # the write in flight holds the exit
        assert proc.wait(timeout=20) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    stderr = proc.stderr.read().decode()
    assert stderr.endswith("Ctrl-D ends it.\n\nscarwarden mcp: stopped\n"), stderr
    assert proc.stdout.read() == b""  # the interrupted call is not answered
    assert head(demo_repo) != before
    assert git(demo_repo.root, "log", "-1", "--format=%s").stdout == "episode: refund a customer\n"
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""


def test_help_lists_every_tool_the_server_offers(cli: object, demo_repo: MemoryRepo) -> None:
    from scarwarden.agents.mcp.server import build_server

    offered = [t.name for t in build_server(demo_repo)._tool_manager.list_tools()]
    assert "audit_image" in offered and len(offered) >= 8
    result = cli("mcp", "--help")  # type: ignore[operator]
    assert result.exit_code == 0
    listed = result.stdout.split(f"Tools ({len(offered)}, as the server lists them):")[1]
    names = [line.split()[0] for line in listed.splitlines() if line.startswith("  ") and line[2] != " "]
    assert names == offered


def test_mcp_config_names_this_executable_by_absolute_path(cli: object, demo_repo: MemoryRepo) -> None:
    entries = json.loads(cli("export", "mcp-config", "--json").stdout)  # type: ignore[operator]
    claude = next(e for e in entries if e["client"] == "claude-code")
    command = json.loads(claude["config"])["mcpServers"]["scarwarden"]["command"]
    assert Path(command).is_absolute() and Path(command).name == "scarwarden"
    assert os.access(command, os.X_OK)
    codex = next(e for e in entries if e["client"] == "codex")
    assert f'command = "{command}"' in codex["config"]
    bare = json.loads(cli("export", "mcp-config", "--json", "--bare-command").stdout)  # type: ignore[operator]
    claude = next(e for e in bare if e["client"] == "claude-code")
    assert json.loads(claude["config"])["mcpServers"]["scarwarden"]["command"] == "scarwarden"
    # What it wrote passes its own check.
    (demo_repo.root / ".mcp.json").write_text(
        next(e for e in entries if e["client"] == "claude-code")["config"]
    )
    assert cli("export", "mcp-config", "--check").exit_code == 0  # type: ignore[operator]
    misuse = cli("export", "agents-md", "--bare-command")  # type: ignore[operator]
    assert misuse.exit_code == 2 and "--bare-command goes with mcp-config" in misuse.stderr


@pytest.mark.parametrize("closed", ["<&-", ">&-"])
def test_a_closed_stdin_or_stdout_is_a_usage_error(demo_repo: MemoryRepo, closed: str) -> None:
    """Started with stdin or stdout closed (a service manager, a broken wrapper), the
    server ended "internal error: AttributeError: 'NoneType' object has no attribute
    'isatty'" (or 'buffer'), "this is a bug in Scarwarden"."""
    command = f'exec "$0" -m scarwarden -C "$1" mcp {closed}'
    proc = subprocess.run(
        ["sh", "-c", command, sys.executable, str(demo_repo.root)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2, proc.stderr
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    stream = "stdin" if closed == "<&-" else "stdout"
    assert f"{stream} is closed: scarwarden mcp speaks MCP over stdin and stdout" in proc.stderr


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize(
    ("streams", "said"),
    [
        ('< "$2" > /dev/full', "could not write the answers to stdout: [Errno 28] No space left on device"),
        ('0> "$2"', "could not read the requests from stdin: [Errno 9] Bad file descriptor"),
    ],
)
def test_a_stdin_or_stdout_that_fails_is_a_clear_error(
    demo_repo: MemoryRepo, tmp_path: Path, streams: str, said: str
) -> None:
    """An answer that could not be written (no space, an I/O error), or stdin that could
    not be read (here open for writing only), ended the server with "internal error:
    ExceptionGroup: unhandled errors in a TaskGroup"."""
    requests = tmp_path / "requests.jsonl"
    client = {"name": "t", "version": "1"}
    params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client}
    initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    requests.write_text(json.dumps(initialize) + "\n")
    command = f'exec "$0" -m scarwarden -C "$1" mcp {streams}'
    proc = subprocess.run(
        ["sh", "-c", command, sys.executable, str(demo_repo.root), str(requests)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    assert "internal error" not in proc.stderr, proc.stderr
    assert said in proc.stderr, proc.stderr


def test_ctrl_c_during_a_slow_commit_hook_commits_the_episode_whole(
    demo_repo: MemoryRepo, tmp_path: Path
) -> None:
    """A terminal sends Ctrl-C's SIGINT to its whole foreground process group: the git
    processes and hooks a record_episode runs died too, so a write caught in its
    pre-commit hook (a real one here, slow) was undone, nothing committed, and the
    server logged "the pre-commit hook refused the commit". The server now starts them
    in a session of their own: the hook finishes, the episode is committed whole, and
    the server exits 130."""
    before = head(demo_repo)
    running = tmp_path / "hook-running"
    hook = Path(git(demo_repo.root, "rev-parse", "--git-path", "hooks").stdout.strip())
    hook = hook if hook.is_absolute() else demo_repo.root / hook
    hook.mkdir(parents=True, exist_ok=True)
    (hook / "pre-commit").write_text(f"#!/bin/sh\n: > '{running}'\nsleep 2\nexit 0\n")
    (hook / "pre-commit").chmod(0o755)
    master, proc = _served_on_a_terminal(demo_repo)
    assert proc.stdout is not None and proc.stderr is not None
    lines = RECORDING
    try:
        os.write(master, json_lines(lines))
        assert json.loads(proc.stdout.readline())["id"] == 0
        deadline = time.monotonic() + 60
        while not running.exists():
            assert time.monotonic() < deadline and proc.poll() is None, "the hook never ran"
            time.sleep(0.02)
        os.write(master, b"\x03")  # the terminal signals the foreground process group
        assert proc.wait(timeout=30) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    stderr = proc.stderr.read().decode()
    assert stderr.endswith("Ctrl-D ends it.\n\nscarwarden mcp: stopped\n"), stderr
    assert head(demo_repo) != before
    assert git(demo_repo.root, "log", "-1", "--format=%s").stdout == "episode: refund a customer\n"
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""


def test_closing_the_terminal_lets_the_write_in_flight_finish(demo_repo: MemoryRepo) -> None:
    """The terminal closed (a window shut, an ssh session dropped) while a record_episode
    waited for the ledger's lock: the kernel's SIGHUP ended the server at once, the write
    left for the next one to repair. Now SIGHUP is handled as SIGTERM is: the write
    finishes, committed whole, then the server exits 129 (128 + SIGHUP)."""
    before = head(demo_repo)
    master, proc = _served_on_a_terminal(demo_repo)
    assert proc.stdout is not None and proc.stderr is not None
    lines = RECORD_BEGUN
    try:
        with write_lock(demo_repo):
            os.write(master, json_lines(lines))
            assert [json.loads(proc.stdout.readline())["id"] for _ in range(2)] == [0, 2]
            os.close(master)  # the terminal hangs up: SIGHUP to the server
            master = -1
            time.sleep(1)  # the hangup reaches the server while the write waits
            assert proc.poll() is None  # the write in flight holds the exit
        assert proc.wait(timeout=20) == 129
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if master >= 0:
            os.close(master)
    stderr = proc.stderr.read().decode()
    assert stderr.endswith("Ctrl-D ends it.\nscarwarden mcp: hung up\n"), stderr
    assert "Traceback" not in stderr
    assert proc.stdout.read() == b""  # the interrupted call is not answered
    assert head(demo_repo) != before
    assert git(demo_repo.root, "log", "-1", "--format=%s").stdout == "episode: refund a customer\n"
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""


def _hooks(repo: MemoryRepo) -> Path:
    hooks = Path(git(repo.root, "rev-parse", "--git-path", "hooks").stdout.strip())
    hooks = hooks if hooks.is_absolute() else repo.root / hooks
    hooks.mkdir(parents=True, exist_ok=True)
    return hooks


def _record_over_pipes(repo: MemoryRepo) -> str:
    """A record_episode through the server over pipes, as a client sends it: its tool error's text."""
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": RECORD}
    replies, proc = serve_lines(repo, [json.dumps(call).encode()])
    assert proc.returncode == 0, proc.stderr
    result = replies[-1]["result"]
    assert result["isError"] is True, result
    return str(result["content"][0]["text"])


def test_a_hook_that_asks_on_the_terminal_is_told_it_has_none(demo_repo: MemoryRepo) -> None:
    """While serving, git and its hooks run in a session of their own, without a terminal:
    a pre-commit hook that asks a question on /dev/tty cannot open it and refuses the
    commit. The error said only "its message above says why", not what to do about it;
    it now says the server runs hooks without a terminal and how to go on."""
    before = head(demo_repo)
    hook = _hooks(demo_repo) / "pre-commit"
    hook.write_text("#!/bin/sh\nprintf 'commit? ' > /dev/tty\nread answer < /dev/tty\n[ \"$answer\" = y ]\n")
    hook.chmod(0o755)
    text = _record_over_pipes(demo_repo)
    assert "the pre-commit hook refused the commit" in text and "/dev/tty" in text, text
    assert "without a terminal" in text and "scarwarden episode add" in text, text
    assert "nothing was committed" in text, text
    assert head(demo_repo) == before
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""


def test_signing_that_needs_a_terminal_is_told_how_to_sign_without_one(
    demo_repo: MemoryRepo, tmp_path: Path
) -> None:
    """commit.gpgSign with a key whose passphrase gpg asks on a terminal (pinentry-tty,
    pinentry-curses), which a server a client started has none of: the hint named
    gpg.program and user.signingKey, which are fine. It now says the passphrase cannot
    be asked and what does work. (gpg.program stands in for gpg failing that way.)"""
    before = head(demo_repo)
    gpg = tmp_path / "gpg"
    gpg.write_text(
        "#!/bin/sh\ncat > /dev/null\necho 'gpg: signing failed: Inappropriate ioctl for device' >&2\nexit 2\n"
    )
    gpg.chmod(0o755)
    git(demo_repo.root, "config", "commit.gpgSign", "true")
    git(demo_repo.root, "config", "gpg.program", str(gpg))
    text = _record_over_pipes(demo_repo)
    assert "gpg failed to sign the data" in text, text
    assert "passphrase" in text and "pinentry" in text and "commit.gpgSign false" in text, text
    assert head(demo_repo) == before
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""
