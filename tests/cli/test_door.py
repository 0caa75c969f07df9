"""The console script's click-free recall (scarwarden/cli/door.py) says, byte for byte,
what the click group says: the same stdout, stderr and exit code for every shape of
command line, the ones it parses itself and the ones it hands to click."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import click
import pytest

from scarwarden.cli import output
from scarwarden.repo import MemoryRepo

#: The click group's own entry point: what ``scarwarden`` ran before the door.
CLICK = "import sys; from scarwarden.cli.group import main; main()"
#: The console script's, noting at exit whether click was imported (the door's own path).
DOOR = (
    "import atexit, os, sys\n"
    "atexit.register(lambda: open(os.environ['DOOR_NOTE'], 'w').write(str('click' in sys.modules)))\n"
    "from scarwarden.cli import main; main()"
)
TASK = "Draft a LinkedIn post announcing our beta"


def _run(argv: list[str], cwd: Path, *, door: bool, stdin: bytes = b"") -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if k != "SCARWARDEN_DEBUG"}
    env["DOOR_NOTE"] = str(cwd.parent / "door-note")
    command = [sys.executable, "-c", DOOR if door else CLICK]
    proc = subprocess.run([*command, *argv], cwd=cwd, input=stdin, capture_output=True, env=env)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def _same(argv: list[str], cwd: Path, stdin: bytes = b"", *, fast: bool) -> tuple[int, str, str]:
    """Run ``argv`` through the door and through click: the same three outputs; ``fast``:
    whether the door should have answered without click."""
    door = _run(argv, cwd, door=True, stdin=stdin)
    assert (cwd.parent / "door-note").read_text() == str(not fast), argv
    assert door == _run(argv, cwd, door=False, stdin=stdin), argv
    return door


@pytest.fixture()
def indexed(demo_repo: MemoryRepo) -> MemoryRepo:
    _run(["recall", "--no-log", TASK], demo_repo.root, door=False)  # builds the index once
    return demo_repo


def test_plain_recalls_print_what_click_prints(indexed: MemoryRepo, tmp_path: Path) -> None:
    root = str(indexed.root)
    shapes = [
        ["recall", TASK],
        ["recall", "--no-log", "--json", "Post our discount code on Twitter"],
        ["recall", "--explain", "--limit", "1", "Draft", "a", "LinkedIn", "post"],
        ["recall", "Draft", "--no-log", "a", "post", "-n2"],
        ["recall", "-n", "7", "--limit=3", "post"],  # a repeated option: click's to say
        ["--debug", "-C", root, "recall", "--no-log", "--json", "-n", "1", TASK],
        [f"--repo={root}", "recall", "--no-log", "Close the billing ticket"],
        [f"-C{root}", "recall", "--no-log", "--limit", "99999999999999999999999", "post"],
        ["--repo", root, "recall", "--no-log", "Nothing like this was ever remembered zyxwv"],
    ]
    # -C/--repo from elsewhere, the others in the repository
    outputs = [
        _same(shape, tmp_path if root in "".join(shape) else indexed.root, fast=shape[1:3] != ["-n", "7"])
        for shape in shapes
    ]
    assert all(code == 0 for code, _, _ in outputs[:4])
    assert "PB-01: Lead LinkedIn posts" in outputs[0][1] and "receipt:" in outputs[0][1]
    assert json.loads(outputs[1][1])["verdict"] in ("ACT", "ACT_AND_FLAG", "ASK_HUMAN")
    assert "idf" in outputs[2][1]
    assert outputs[8][1].startswith("ASK_HUMAN")


def test_errors_and_refusals_read_the_same(indexed: MemoryRepo, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    cases = [
        (["-C", str(tmp_path / "missing"), "recall", "x"], 2),  # no such folder
        (["-C", str(plain), "recall", "x"], 2),  # not a git repository
        (["-C", str(a_file), "recall", "x"], 2),  # click.Path: a file
        (["recall"], 2),  # missing TASK
        (["recall", "--limit", "0", "x"], 2),
        (["recall", "-n", "-3", "x"], 2),
        (["recall", "--bogus", "x"], 2),
        (["recall", "--json", "--json", "x"], 0),
        (["recall", "--", "-x"], 0),
        (["recall", "caf\udce9"], 2),  # not UTF-8
        (["recall", "--help"], 0),
        (["--version"], 0),
        (["recall", "-"], 2),  # stdin empty: the task is empty
    ]
    for number, (argv, code) in enumerate(cases):
        got = _same(argv, indexed.root, fast=number in (0, 1, len(cases) - 1))
        assert got[0] == code, (argv, got)
    assert "no such folder (given with -C/--repo)" in _same(cases[0][0], indexed.root, fast=True)[2]
    assert "git init" in _same(cases[1][0], indexed.root, fast=True)[2]


def test_a_task_from_stdin_and_a_bad_one(indexed: MemoryRepo) -> None:
    code, out, _ = _same(["recall", "--no-log", "-"], indexed.root, stdin=TASK.encode(), fast=True)
    assert code == 0 and "PB-01" in out
    code, _, err = _same(["recall", "--no-log", "-"], indexed.root, stdin=b"caf\xe9", fast=True)
    assert code == 2 and "not valid UTF-8" in err


def test_a_terminal_gets_the_same_colours(indexed: MemoryRepo) -> None:
    """On a terminal the styles are kept, and they are click's codes."""

    def on_a_tty(door: bool) -> bytes:
        leader, follower = pty.openpty()
        command = [sys.executable, "-m", "scarwarden"] if door else [sys.executable, "-c", CLICK]
        proc = subprocess.Popen([*command, "recall", "--no-log", TASK], cwd=indexed.root, stdout=follower)
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the other end closed (Linux: EIO)
                break
            if not chunk:
                break
            chunks.append(chunk)
        proc.wait()
        os.close(leader)
        return b"".join(chunks)

    coloured = on_a_tty(door=True)
    assert b"\x1b[32m\x1b[1mACT" in coloured or b"\x1b[33m\x1b[1mACT_AND_FLAG" in coloured
    assert coloured == on_a_tty(door=False)


def test_a_plain_recall_never_imports_click(indexed: MemoryRepo) -> None:
    probe = (
        "import sys, runpy\n"
        f"sys.argv = ['scarwarden', 'recall', '--no-log', {TASK!r}]\n"
        "try:\n    runpy.run_module('scarwarden', run_name='__main__')\n"
        "except SystemExit as exc:\n    print('EXIT', exc.code, file=sys.stderr)\n"
        "print('CLICK', 'click' in sys.modules, file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], cwd=indexed.root, capture_output=True, text=True)
    assert "PB-01" in proc.stdout, proc.stderr
    assert "EXIT 0" in proc.stderr and "CLICK False" in proc.stderr


@pytest.mark.parametrize(
    ("kwargs"),
    [
        {"fg": "green", "bold": True},
        {"fg": "yellow", "bold": True},
        {"fg": "red", "bold": True},
        {"bold": True},
        {"dim": True},
        {"fg": "yellow"},
    ],
)
def test_style_is_clicks(kwargs: dict[str, object]) -> None:
    assert output.style("PB-01: x", **kwargs) == click.style("PB-01: x", **kwargs)  # type: ignore[arg-type]
    styled = output.style("a\x1b[2Kb", **kwargs)  # type: ignore[arg-type]
    assert output.strip_ansi(styled) == click.unstyle(styled) == "ab"


def test_a_reader_that_goes_away(indexed: MemoryRepo) -> None:
    """``scarwarden recall ... | head -0``: no traceback, exit 0, as the click group."""

    def closed_early(door: bool) -> tuple[int, bytes]:
        read, write = os.pipe()
        os.close(read)  # nobody will read: the first write is EPIPE
        env = {**os.environ, "DOOR_NOTE": str(indexed.root.parent / "door-note")}
        argv = [sys.executable, "-c", DOOR if door else CLICK, "recall", "--no-log", TASK]
        proc = subprocess.run(argv, cwd=indexed.root, stdout=write, stderr=subprocess.PIPE, env=env)
        os.close(write)
        return proc.returncode, proc.stderr

    assert closed_early(door=True) == closed_early(door=False) == (0, b"")
    assert (indexed.root.parent / "door-note").read_text() == "False"
