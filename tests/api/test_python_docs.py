"""Every ``python`` block of docs/python.md runs, each in a fresh copy of the demo memory.

A block runs as a script (``python -c``) with the memory as the current directory, the
installed package, no model key; it passes when it exits 0. A block after
``<!-- not run: REASON -->`` is skipped, as the shell examples' marker says.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from doc_examples import BLOCK_MARKER

from scarwarden.files.scaffold import init as init_memory
from scarwarden.repo import open_repo

DOC = ROOT / "docs" / "python.md"


def python_blocks(path: Path) -> list[tuple[int, str, str | None]]:
    """(line, code, why not run) of every ```python block."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found, i, pending = [], 0, None
    while i < len(lines):
        marker = BLOCK_MARKER.search(lines[i])
        if marker:
            pending = marker.group(1)
        elif lines[i].strip() == "```python":
            start = i + 1
            i += 1
            while lines[i].strip() != "```":
                i += 1
            found.append((start, "\n".join(lines[start:i]) + "\n", pending))
            pending = None
        elif lines[i].strip():
            pending = None
        i += 1
    return found


BLOCKS = python_blocks(DOC)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("pydocs")
    repo = base / "memory"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "root"], cwd=repo, check=True)
    init_memory(open_repo(repo, initialised=False), demo=True)
    return repo


def test_every_public_function_has_an_example() -> None:
    code = "".join(block for _, block, _ in BLOCKS)
    for call in (
        "open_memory(",
        ".recall(",
        ".record(",
        ".answer(",
        ".distill(",
        ".rule(",
        ".episode(",
        ".import_runs(",
    ):
        assert call in code, call
    assert len(BLOCKS) >= 8


@pytest.mark.parametrize(("line", "code", "skip"), BLOCKS, ids=[f"python.md:{b[0]}" for b in BLOCKS])
def test_python_example_runs(template: Path, tmp_path: Path, line: int, code: str, skip: str | None) -> None:
    if skip:
        pytest.skip(f"marked in the doc: {skip}")
    repo = tmp_path / "memory"
    shutil.copytree(template, repo, symlinks=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCARWARDEN_", "DASHSCOPE", "OPENAI"))}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=repo, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, f"docs/python.md:{line}\n{done.stdout}\n{done.stderr}"
    assert "Traceback" not in done.stderr
    assert done.stdout.strip(), "an example shows what it returns"
    assert not re.search(r"^warning:", done.stderr, re.M) or "privacy" in done.stderr
