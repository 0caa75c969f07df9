"""kill -9 trials: every writing command, killed all along its run (issue 15).

For each command, one uninterrupted run first measures its duration on this machine;
then each trial: run it in a process group of its own, wait until the middle of one of
``trials`` equal slices of that duration (each slice once, in an order the seed
shuffles), ``kill -9`` the whole group, then run the command again. The trial passes
when that next run succeeds and nothing is left behind: no ``index.lock`` or other
``.lock`` under ``.git``, no temporary file (``.*.tmp``, ``scarwarden-index-*``,
``index.db.tmp-*``, the write journal), ``git status`` clean, a merge or rebase not
left half-done; every ``--check-every`` trials (and after the last) ``index --rebuild``
and ``check --all`` pass too.

It also counts where the kills landed: before anything was written, mid-write (the
journal was there: the next run rolled it back or forward), or after the commit.

    python bench/kill_bench.py                      # 30 trials of each command
    python bench/kill_bench.py --trials 5 --only "episode add" --only sync

Figures go to docs/benchmarks.md ("kill -9 trials").
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

SW = [sys.executable, "-m", "scarwarden"]
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Kill Bench",
    "GIT_AUTHOR_EMAIL": "kill@example.com",
    "GIT_COMMITTER_NAME": "Kill Bench",
    "GIT_COMMITTER_EMAIL": "kill@example.com",
}


@dataclass
class World:
    base: Path
    repo: Path
    other: Path
    env: dict[str, str]
    episodes: list[str] = field(default_factory=list)
    #: The episode the current ``redact`` trial takes back.
    target: str = ""

    def sw(self, *args: str, where: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*SW, *args], cwd=where or self.repo, env=self.env, capture_output=True, text=True
        )

    def git(self, *args: str, where: Path | None = None) -> str:
        proc = subprocess.run(
            ["git", *args], cwd=where or self.repo, env=self.env, capture_output=True, text=True
        )
        if proc.returncode:
            raise RuntimeError(f"git {' '.join(args)}: {proc.stderr}")
        return proc.stdout


def must(proc: subprocess.CompletedProcess[str]) -> str:
    if proc.returncode != 0:
        raise RuntimeError(
            f"{' '.join(map(str, proc.args))} exited {proc.returncode}:\n{proc.stdout}{proc.stderr}"
        )
    return proc.stdout


def make_world(base: Path, episodes: int = 12) -> World:
    """A memory repository with the hooks and merge driver installed, a bare remote,
    and a second clone that pushes to it."""
    env = {**os.environ, **GIT_ENV, "HOME": str(base), "GIT_CONFIG_NOSYSTEM": "1"}
    env.pop("GIT_DIR", None)
    env.pop("GIT_INDEX_FILE", None)
    subprocess.run(
        ["git", "init", "-q", "--bare", "-b", "main", str(base / "remote.git")], check=True, env=env
    )
    subprocess.run(["git", "clone", "-q", str(base / "remote.git"), str(base / "repo")], check=True, env=env)
    world = World(base, base / "repo", base / "other", env)
    must(world.sw("init"))
    must(world.sw("hooks", "install"))
    for i in range(episodes):
        world.episodes.append(add_episode(world, f"seed {i}"))
    must(world.sw("distill", "--offline"))
    world.git("push", "-q", "-u", "origin", "HEAD:main")
    subprocess.run(["git", "clone", "-q", str(base / "remote.git"), str(world.other)], check=True, env=env)
    must(world.sw("hooks", "install", where=world.other))
    return world


WORDS = "invoice refund banner travel kafka topic launch budget hotel portal discount review".split()


def add_episode(world: World, label: str, where: Path | None = None) -> str:
    word = random.choice(WORDS)  # noqa: S311 - test data
    out = must(
        world.sw(
            "episode",
            "add",
            "--task",
            f"Prepare the {word} for {label}",
            "--outcome",
            "sent",
            "--correction",
            f"Always check the {word} owner before {label}",
            "--tag",
            word,
            "--json",
            where=where,
        )
    )
    import json

    return str(json.loads(out)["id"])


@dataclass(frozen=True)
class Command:
    name: str
    #: Uninterrupted set-up so the command has work to do (trial number given).
    prepare: Callable[[World, int], None]
    #: The argv after ``scarwarden`` (trial number given).
    argv: Callable[[World, int], list[str]]
    #: The repository a trial runs in (default: the shared one; ``init``: a new one).
    where: Callable[[World, int], World] | None = None
    #: Whether the next run's result is right (default: it exited 0).
    accept: Callable[[World, subprocess.CompletedProcess[str]], bool] | None = None
    #: ``--no-commit``: files staged whole ("A  " in git status) are its result, not leftovers.
    stages: bool = False


def _nothing(world: World, i: int) -> None:
    return None


def _new_episode(world: World, i: int) -> None:
    world.episodes.append(add_episode(world, f"distill {i}"))


def _remote_moves(world: World, i: int) -> None:
    world.episodes.append(add_episode(world, f"local {i}"))
    add_episode(world, f"remote {i}", where=world.other)
    must(world.sw("sync", where=world.other))


def _new_target(world: World, i: int) -> None:
    world.target = add_episode(world, f"leak {i}")
    world.episodes.append(world.target)


def _playbook_moves(world: World, i: int) -> None:
    must(world.sw(*_rule_add(world, 500 + i)))


def _rule_add(world: World, i: int) -> list[str]:
    text = f"Rule {i}: confirm the owner {i} times before acting."
    cites = random.choice(world.episodes)  # noqa: S311 - test data
    return ["rule", "add", "--text", text, "--tag", "kill", "--cites", cites]


def _commit_staged(world: World, i: int) -> None:
    """What the previous ``--no-commit`` trials staged, committed (through the hooks)."""
    if subprocess.run(["git", "diff", "--cached", "--quiet"], cwd=world.repo, env=world.env).returncode:
        world.git("commit", "-q", "-m", f"staged episodes before trial {i}")


def _fresh_repository(world: World, i: int) -> World:
    """A new repository for each ``init`` trial: with no commit yet on odd trials
    (nothing for HEAD's compare-and-swap but "the branch must not exist") and an
    untracked ``.gitignore`` of the user's, with one commit on even trials."""
    path = world.base / f"init-{i}"
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True, env=world.env)
    fresh = World(world.base, path, world.other, world.env)
    if i % 2 == 0:
        (path / "README.md").write_text(f"project {i}\n")
        fresh.git("add", "README.md")
        fresh.git("commit", "-q", "-m", "start")
    else:
        (path / ".gitignore").write_text("*.log\n")  # untracked: init appends to it, commits it
    return fresh


def _init_again_ok(world: World, proc: subprocess.CompletedProcess[str]) -> bool:
    """The next ``init`` works, or says there is a memory when the killed one landed."""
    if proc.returncode == 0:
        return True
    landed = subprocess.run(
        ["git", "cat-file", "-e", "HEAD:memory/playbook.md"], cwd=world.repo, env=world.env
    )
    return landed.returncode == 0 and "already holds a Scarwarden memory" in proc.stderr


COMMANDS = [
    Command(
        "episode add",
        _nothing,
        lambda w, i: [
            "episode",
            "add",
            "--task",
            f"Killed add {i}",
            "--correction",
            f"Lesson {i} of the kill",
        ],
    ),
    Command(
        "rule add",
        _nothing,
        lambda w, i: [
            "rule",
            "add",
            "--text",
            f"Rule {i}: confirm the owner {i} times before acting.",
            "--tag",
            "kill",
            "--cites",
            random.choice(w.episodes),  # noqa: S311 - test data
        ],
    ),
    Command("distill --offline", _new_episode, lambda w, i: ["distill", "--offline"]),
    # sync before ask: an episode whose recall receipt names a local ledger tree cannot
    # be proved once a rebase rewrote that tree away (pre-push refuses it): a receipts
    # question (issue 20), not a kill-safety one.
    Command("sync", _remote_moves, lambda w, i: ["sync"]),
    Command(
        "ask --answer",
        _nothing,
        lambda w, i: ["ask", f"Plan the zebra offsite number {i}", "--answer", f"Book room {i}", "--force"],
    ),
    Command("index --rebuild", _nothing, lambda w, i: ["index", "--rebuild"]),
    Command(
        "episode add --no-commit",
        _commit_staged,
        lambda w, i: [
            "episode",
            "add",
            "--no-commit",
            "--task",
            f"Staged add {i}",
            "--correction",
            f"Stage {i}",
        ],
        stages=True,
    ),
    Command("redact", _new_target, lambda w, i: ["redact", w.target, "--reason", "leaked in a kill trial"]),
    Command("export --commit", _playbook_moves, lambda w, i: ["export", "agents-md", "--commit"]),
    Command(
        "init",
        _nothing,
        lambda w, i: ["init", "--demo", "--hooks"],
        where=_fresh_repository,
        accept=_init_again_ok,
    ),
]


def leftovers(world: World) -> list[str]:
    """What a killed run must not leave once the next command has run."""
    repo = world.repo
    found = [str(p.relative_to(repo)) for p in (repo / ".git").rglob("*.lock")]
    found += [str(p.relative_to(repo)) for p in (repo / ".git").glob("scarwarden-*")]
    found += [str(p.relative_to(repo)) for p in repo.rglob(".*.tmp") if ".git" not in p.parts]
    state = repo / ".scarwarden"
    found += [str(p.relative_to(repo)) for p in state.glob("index.db.tmp-*")]
    found += [str(p.relative_to(repo)) for p in state.glob("write-journal.json")]
    found += [str(p.relative_to(repo)) for p in state.glob("*.db-journal")]
    for marker in ("MERGE_HEAD", "rebase-merge", "rebase-apply", "CHERRY_PICK_HEAD"):
        if (repo / ".git" / marker).exists():
            found.append(f".git/{marker}")
    status = world.git("status", "--porcelain", "--untracked-files=all")
    found += [f"status: {line}" for line in status.splitlines()]
    return found


def timed_run(world: World, argv: list[str]) -> float:
    start = time.perf_counter()
    must(world.sw(*argv))
    return time.perf_counter() - start


def kill_at(world: World, argv: list[str], delay: float) -> int:
    """Start the command in its own process group; kill -9 the group after ``delay``.
    Returns the exit code (-9 when killed)."""
    proc = subprocess.Popen(
        [*SW, *argv],
        cwd=world.repo,
        env=world.env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        proc.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    return proc.returncode


@dataclass
class Outcome:
    trials: int = 0
    failures: list[str] = field(default_factory=list)
    where: Counter[str] = field(default_factory=Counter)
    duration: float = 0.0


def run_trials(
    world: World, command: Command, trials: int, check_every: int, seed: int, duration: float | None = None
) -> Outcome:
    """``trials`` kills of ``command``, spread over ``duration`` (default: the command's
    own wall time, measured by one uninterrupted run first) by :func:`moments`."""
    out = Outcome()
    if duration is None:
        here = command.where(world, 0) if command.where else world
        command.prepare(here, 0)
        out.duration = timed_run(here, command.argv(here, 0))  # the calibration run
    else:
        out.duration = duration
    for i, moment in enumerate(moments(trials, seed), start=1):
        here = command.where(world, i) if command.where else world
        problems = _trial(here, command, i, moment * out.duration, out)
        if check_every and (i % check_every == 0 or i == trials):
            problems += rebuild_and_check(here)
        if problems:
            out.failures.append(f"trial {i}: " + "; ".join(problems))
            _tidy(here)
    if command.stages:
        _commit_staged(world, trials + 1)  # the next command starts from a clean status
    return out


def moments(trials: int, seed: int) -> list[float]:
    """When each trial's kill lands, as fractions of the command's duration: the middles
    of ``trials`` equal slices (1/60, 3/60 ... 59/60 for 30 trials; 1/4 and 3/4 for 2).
    Random moments in a fixed window hit the write itself only by luck on a fast machine
    (the kills fell before the command started or after it had finished); these cover the
    whole run however fast it is, the write included. The seed shuffles their order, so
    the late kills do not all fall on the last trials, when the repository is largest."""
    spread = [(k + 0.5) / trials for k in range(trials)]
    random.Random(seed).shuffle(spread)
    return spread


def _trial(world: World, command: Command, i: int, delay: float, out: Outcome) -> list[str]:
    """One kill, then the next run: what is wrong afterwards (nothing when it passed)."""
    command.prepare(world, i)
    head = world.git("rev-parse", "--verify", "-q", "HEAD") if _born(world) else ""
    code = kill_at(world, command.argv(world, i), delay)
    journal = (world.repo / ".scarwarden" / "write-journal.json").exists()
    moved = (world.git("rev-parse", "--verify", "-q", "HEAD") if _born(world) else "") != head
    out.where[
        "finished" if code == 0 else "mid-write" if journal else "after commit" if moved else "before"
    ] += 1
    out.trials += 1
    again = world.sw(*command.argv(world, 1000 + i))
    ok = command.accept(world, again) if command.accept else again.returncode == 0
    problems = [] if ok else [f"next run exited {again.returncode}: {again.stderr.strip()}"]
    left = leftovers(world)
    if command.stages:
        left = [line for line in left if not line.startswith("status: A  ")]
    return problems + left


def _born(world: World) -> bool:
    """Whether HEAD names a commit (a new repository's branch is unborn)."""
    proc = subprocess.run(
        ["git", "rev-parse", "--verify", "-q", "HEAD"], cwd=world.repo, env=world.env, capture_output=True
    )
    return proc.returncode == 0


def rebuild_and_check(world: World) -> list[str]:
    """``index --rebuild`` and ``check --all``: their complaints (none when both pass)."""
    problems = []
    for args in (["index", "--rebuild"], ["check", "--all"]):
        proc = world.sw(*args)
        if proc.returncode != 0:
            problems.append(
                f"{' '.join(args)} exited {proc.returncode}: {(proc.stdout + proc.stderr)[-400:]}"
            )
    return problems


def _tidy(world: World) -> None:
    """After a failed trial, put the repository right so the next trial is independent."""
    for lock in (world.repo / ".git").rglob("*.lock"):
        lock.unlink(missing_ok=True)
    subprocess.run(["git", "rebase", "--abort"], cwd=world.repo, env=world.env, capture_output=True)
    subprocess.run(["git", "merge", "--abort"], cwd=world.repo, env=world.env, capture_output=True)
    subprocess.run(["git", "reset", "-q", "--hard"], cwd=world.repo, env=world.env, capture_output=True)
    subprocess.run(["git", "clean", "-qfd"], cwd=world.repo, env=world.env, capture_output=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trials", type=int, default=30)
    parser.add_argument("--only", action="append", help="a command name (repeatable)")
    parser.add_argument("--check-every", type=int, default=5)
    parser.add_argument("--seed", type=int, default=15)
    args = parser.parse_args(argv)
    random.seed(args.seed)
    base = Path(tempfile.mkdtemp(prefix="scarwarden-kill-"))
    total_failures = 0
    try:
        world = make_world(base)
        print(
            f"git {subprocess.run(['git', '--version'], capture_output=True, text=True).stdout.split()[-1]}, "
            f"load {os.getloadavg()[0]:.1f}, {args.trials} trials each, seed {args.seed}"
        )
        print(
            "| command | run (s) | trials | next run ok, nothing left | killed before writing "
            "| mid-write | after the commit | finished |"
        )
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for command in COMMANDS:
            if args.only and command.name not in args.only:
                continue
            out = run_trials(world, command, args.trials, args.check_every, args.seed)
            ok = out.trials - len(out.failures)
            w = out.where
            print(
                f"| `{command.name}` | {out.duration:.2f} | {out.trials} | {ok}/{out.trials} "
                f"| {w['before']} | {w['mid-write']} | {w['after commit']} | {w['finished']} |",
                flush=True,
            )
            for failure in out.failures:
                print(f"    FAIL {failure}", flush=True)
            total_failures += len(out.failures)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 1 if total_failures else 0


if __name__ == "__main__":
    sys.exit(main())
