"""The README's tour, line for line, in a new repository (issue 28, point 5): each command
as a newcomer types it, through the installed ``scarwarden``, with the verdicts the
README's comments promise."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, git

BIN = Path(sys.executable).parent


def tour_commands() -> list[str]:
    """The tour's shell lines, continuation lines joined, comments and blanks dropped."""
    readme = (ROOT / "README.md").read_text()
    start = readme.index("## A five-minute tour in your own repository")
    block = readme[
        readme.index("```bash\n", start) + 8 : readme.index("```", readme.index("```bash\n", start) + 8)
    ]
    joined = block.replace("\\\n", " ")
    return [
        line.strip() for line in joined.splitlines() if line.strip() and not line.lstrip().startswith("#")
    ]


def run(line: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", NO_COLOR="1")
    return subprocess.run(
        ["bash", "-c", line],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )


def serve(line: str, cwd: Path) -> str:
    """``scarwarden serve`` runs until stopped: start it (on a free port: the default
    5054 may be taken on a shared machine), read the address it serves, stop it."""
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    command = line.split("#")[0].split() + ["--port", "0"]
    proc = subprocess.Popen(command, cwd=cwd, env=env, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        assert proc.poll() is None, first + proc.stderr.read()
        return first
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_the_readme_tour_runs_line_for_line_in_a_new_repository(tmp_path: Path) -> None:
    pytest.importorskip("flask")  # the tour's serve line says: needs the ui extra
    repo = tmp_path / "your-repo"
    repo.mkdir()
    git(repo, "init", "-q")
    commands = tour_commands()
    assert commands[0].startswith("cd your-repo") and len(commands) >= 12
    out: dict[str, str] = {}
    for line in commands[1:]:
        if "PB-..." in line:
            rules = json.loads(run("scarwarden rule list --json", repo).stdout)
            line = line.replace("PB-...", rules[0]["id"])
        if line.startswith("scarwarden serve"):
            out["serve"] = serve(line, repo)
            continue
        proc = run(line, repo)
        assert proc.returncode == 0, f"{line}\n{proc.stdout}\n{proc.stderr}"
        assert "Traceback" not in proc.stderr, line
        out[line.split("#")[0].strip()] = proc.stdout
    by_start = {" ".join(key.split('"')[0].split()): value for key, value in out.items()}
    assert "Installed the pre-commit gate" in by_start["scarwarden init --hooks"]
    assert re.fullmatch(
        r"ep-[0-9a-z]{10}\n", by_start["scarwarden episode add --agent writer --source correction --task"]
    )
    assert "distill: +1 rule" in by_start["scarwarden distill"]
    assert by_start["scarwarden recall"].startswith("ACT ")  # the comment's verdict
    assert re.fullmatch(r"ep-[0-9a-z]{10}\n", by_start["scarwarden ask"])  # recorded
    assert "Verdict: ACT" in by_start["scarwarden answer"]
    assert (
        "== WITH MEMORY" in by_start["scarwarden answer"]
        and "== WITHOUT MEMORY" in by_start["scarwarden answer"]
    )
    assert "http://127.0.0.1:" in out["serve"]
    log = git(repo, "log", "--format=%s").stdout
    assert log.count("\n") >= 4  # init, the episode, the distill, the answer
