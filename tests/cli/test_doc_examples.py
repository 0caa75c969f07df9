"""Every ``scarwarden ...`` example in docs/*.md runs, so a doc cannot drift (issue 18).

Each example runs as a new user would type it: through ``bash -c`` with the installed
``scarwarden`` command, no terminal and no model key, in its own copy of a repository
holding the bundled demo memory (``init`` examples get a plain git repository, as their
doc says). The copy also has what examples name: ``origin/main`` (a real bare remote),
``draft.txt``, ``import.jsonl``, a ``my-agent`` command, ``~/team-memory``, and the CI
variables ``$BASE``/``$HEAD``/``$BASE_SHA``/``$HEAD_SHA`` (not ``$RUNNER_TEMP``: an
example must work outside CI too).

An example passes when it exits 0 (or the code its ``(exits N: why)`` marker names) with
no traceback. Markers are listed in tests/doc_examples.py.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import ROOT, git
from doc_examples import Example, all_examples

from scarwarden.files.scaffold import init as init_memory
from scarwarden.index.refresh import open_index
from scarwarden.repo import open_repo

EXAMPLES = all_examples(ROOT / "docs")
DRAFT = "Beta sale this week; codes go to the mailing list only [PB-02, learnt in ep-wmjgdnc59j]\n"


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str


def _env(home: Path, bin_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCARWARDEN_", "GIT_", "DASHSCOPE"))}
    env.pop("CI", None)
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        PRE_COMMIT_HOME=str(home / ".pre-commit"),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=str(home / ".gitconfig"),
        PATH=os.pathsep.join([str(Path(sys.executable).parent), str(bin_dir), env.get("PATH", "")]),
        COLUMNS="100",
    )
    return env


def _workspace(base: Path) -> Path:
    """The template every example copies: the demo repo and what the examples name."""
    home, bin_dir = base / "home", base / "bin"
    home.mkdir()
    bin_dir.mkdir()
    (home / ".gitconfig").write_text(
        "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n"
        "[user]\n\tname = Doc Reader\n\temail = reader@example.com\n"
    )
    env = _env(home, bin_dir)
    repo = base / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main", env=env)
    git(repo, "commit", "-q", "--allow-empty", "-m", "root", env=env)
    saved = dict(os.environ)
    os.environ.update({k: env[k] for k in ("HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM")})
    try:
        init_memory(open_repo(repo, initialised=False), demo=True)
        # The index (a git-ignored cache) built once here, as any memory in use has one:
        # else each of the ~100 runs built it first (~60 ms of its ~250 ms). 'index
        # --rebuild' examples still rebuild it; a copy finds it current (its files' state).
        open_index(open_repo(repo)).close()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    for n in range(3):  # `diff HEAD~3 HEAD` needs some history
        git(repo, "commit", "-q", "--allow-empty", "-m", f"work {n}", env=env)
    git(base, "init", "-q", "--bare", "origin.git", env=env)
    git(repo, "remote", "add", "origin", str(base / "origin.git"), env=env)
    git(repo, "push", "-q", "origin", "main", env=env)
    (repo / "draft.txt").write_text(DRAFT)
    (repo / "import.jsonl").write_text(
        json.dumps(
            {"task": "Reply to the refund ticket", "outcome": "Refunded in 2 days", "tags": ["refund"]}
        )
        + "\n"
    )
    agent = bin_dir / "my-agent"
    agent.write_text(f"#!/bin/sh\nprintf '%s' {DRAFT.strip()!r}\n")
    agent.chmod(0o755)
    shutil.copytree(repo, home / "team-memory", symlinks=True)
    plain = base / "plain"
    plain.mkdir()
    git(plain, "init", "-q", "-b", "main", env=env)
    git(plain, "commit", "-q", "--allow-empty", "-m", "root", env=env)
    return base


def _run(template: Path, example: Example, where: Path) -> Outcome:
    shutil.copytree(template, where, symlinks=True)
    home, repo = where / "home", where / "repo"
    words = example.command.split()
    if "init" in words[1:3]:  # `scarwarden init` makes a plain git repository a memory repo
        repo = where / "plain"
    git(home / "team-memory", "remote", "set-url", "origin", str(where / "origin.git"))
    git(repo, "remote", "set-url", "origin", str(where / "origin.git"), check=False)
    env = _env(home, where / "bin")
    head = git(where / "repo", "rev-parse", "HEAD").stdout.strip()
    # $RUNNER_TEMP stays unset: an example must not write to /audit outside CI.
    env.update(BASE="origin/main", HEAD=head, BASE_SHA=head + "~2", HEAD_SHA=head)
    try:
        proc = subprocess.run(
            ["bash", "-c", example.command],
            cwd=repo,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except subprocess.TimeoutExpired:
        return Outcome(-1, "", "still running after 60 s (a server? mark it '(not run: why)')")
    return Outcome(proc.returncode, proc.stdout, proc.stderr)


def _same_run(example: Example) -> tuple[str, int]:
    """What makes two examples one run: the command bash executes (a trailing comment is
    not executed) and the exit code expected. The docs repeat ~30 commands (``scarwarden
    distill`` four times, ``demo`` twice: ~1.5 s each); each starts from the same fresh
    copy, so a repeat would run the same command on the same files again."""
    bare = re.sub(r"\s#\s.*$", "", example.command).rstrip()
    try:  # only where the '#' really starts a comment (not inside quotes)
        same = shlex.split(bare) == shlex.split(example.command, comments=True)
    except ValueError:
        same = False
    return (bare if same else example.command), example.expect


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    """Every runnable example, run once (repeats of a command share its run), three at a
    time (each is its own process)."""
    template = _workspace(tmp_path_factory.mktemp("doc-template"))
    runs = tmp_path_factory.mktemp("doc-runs")
    todo: dict[tuple[str, int], Example] = {}
    for ex in EXAMPLES:
        if ex.skip is None:
            todo.setdefault(_same_run(ex), ex)
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {
            key: pool.submit(_run, template, ex, runs / f"ex{n}") for n, (key, ex) in enumerate(todo.items())
        }
        done = {key: f.result() for key, f in futures.items()}
    return {ex.id: done[_same_run(ex)] for ex in EXAMPLES if ex.skip is None}


def test_the_docs_have_examples_and_most_run() -> None:
    assert len(EXAMPLES) >= 80
    skipped = [ex for ex in EXAMPLES if ex.skip]
    assert len(skipped) <= len(EXAMPLES) // 5, [ex.id for ex in skipped]


@pytest.mark.slow  # the module's fixture runs every example: ~40 s of CPU
@pytest.mark.parametrize("example", EXAMPLES, ids=[ex.id for ex in EXAMPLES])
def test_doc_example_runs(example: Example, outcomes: dict[str, Outcome]) -> None:
    if example.skip is not None:
        pytest.skip(f"marked in the doc: {example.skip}")
    got = outcomes[example.id]
    shown = f"$ {example.command}\nexit {got.code}\n--- stdout\n{got.stdout[-2000:]}\n"
    shown += f"--- stderr\n{got.stderr[-2000:]}"
    assert "Traceback" not in got.stderr, shown
    assert got.code == example.expect, shown
