"""Benchmark of the provenance gate: the pre-commit hook and ``scarwarden verify``.

1. The hook as git runs it: ``python -m scarwarden check --staged`` as a fresh process,
   on a commit that adds one episode and changes the playbook (a new rule citing the new
   episode and an old one), with 1,000 and 100,000 episodes committed (bench/_gen.py
   repositories: ~500-byte episodes sharded by month, 50 rules, packed). Target: under
   150 ms at 100k and within 1.5x of 1k: the cost follows the staged change, not the
   ledger. For scale, the same tree checked whole (``check --all``, every episode parsed).
2. ``scarwarden verify`` over a history of 1,000 commits (3 episodes each, a new rule
   every third commit), generated with ``git fast-import`` and cached in bench/.cache/.

    python bench/hook_bench.py            # 1k vs 100k; verify over 1,000 commits
    python bench/hook_bench.py --quick    # 1k vs 10k; verify over 200 commits

Wall times on a shared machine are noisy: each figure is the median of ``--runs`` runs
(min in brackets), and the ratio compares medians measured in the same run.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import _gen  # noqa: E402

from scarwarden.files.episodes import render_episode  # noqa: E402

CACHE = HERE / ".cache"
HISTORY_VERSION = "1"
CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"
WORDS = (
    "newsletter subject line email open rate linkedin post hook hashtags refund "
    "approval ticket billing dispute outage routing triage discount code social "
    "coupon privacy request deletion onboarding checklist invoice release notes "
    "changelog pricing page headline webinar invite survey churn renewal"
).split()


def _env() -> dict[str, str]:
    # An installed package runs from bytecode: this sandbox sets PYTHONDONTWRITEBYTECODE,
    # which would make every hook run recompile the package (~30 ms), so turn the cache
    # back on in a private folder (as ledger_bench.py does).
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(Path(__file__).resolve().parent / ".cache" / "pycache")
    env.update(_gen.IDENTITY)
    return env


def git(cwd: Path, *args: str, input: bytes | None = None) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, input=input, check=True, capture_output=True, env=_env()
    ).stdout.decode()


def run_once(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """(wall ms, CPU ms of the process and its git children, output) of one fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env or _env())
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1000
    out = proc.stdout + proc.stderr
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed in {cwd}:\n{out}")
    return wall, cpu, out.strip()


def timed(cmd: list[str], cwd: Path, runs: int) -> tuple[float, float, str]:
    """(median wall ms, min wall ms, last output) of ``runs`` runs after one warm-up."""
    run_once(cmd, cwd)
    results = [run_once(cmd, cwd) for _ in range(runs)]
    walls = [w for w, _, _ in results]
    return statistics.median(walls), min(walls), results[-1][2]


def stage_commit(repo: Path) -> None:
    """Stage what the benchmark commits: one new episode and a rule citing it."""
    manifest = _gen.load_manifest(repo)
    new_id = "ep-bench0new1"
    data = {
        "id": new_id,
        "at": "2026-11-29T10:00:00Z",
        "agent": "writer",
        "task": "Write the webinar invite for the spring sale",
        "action": "Gave the start time without a timezone",
        "outcome": "Attendees in three countries asked which 10:00 was meant",
        "correction": "Always state webinar times in UTC and the main local timezone",
        "corrected_by": "maya",
        "tags": ["webinar", "timezone"],
        "source": "correction",
    }
    rel = f"memory/episodes/2026/11/{new_id}.yaml"
    (repo / rel).parent.mkdir(parents=True, exist_ok=True)
    (repo / rel).write_text(render_episode(data))
    old = manifest["episode_ids"][len(manifest["episode_ids"]) // 2]
    playbook = repo / "memory" / "playbook.md"
    playbook.write_text(
        playbook.read_text()
        + (
            f"\n## PB-{manifest['rules'] + 1:02d}: Give webinar times with a timezone\n\n"
            "State webinar times in UTC and the audience's main timezone.\n\n"
            f"- Tags: webinar, timezone\n- Learnt in: {new_id}, {old}\n"
        )
    )
    git(repo, "add", rel, "memory/playbook.md")


def ledger_repo(n: int, work: Path) -> Path:
    """A work copy of the cached n-episode repository sharing its objects (hard links),
    with git's index read from HEAD and no files checked out: the hook reads only the
    index and the object store, and copying 100k files would take a minute."""
    dest = work / f"ledger-{n}"
    git(
        work, "clone", "-q", "--local", "--no-checkout", str(_gen.cached_repo(n, rules=50, seed=1)), str(dest)
    )
    git(dest, "read-tree", "HEAD")
    manifest = dest / ".git" / _gen.MANIFEST
    shutil.copy2(_gen.cached_repo(n, rules=50, seed=1) / ".git" / _gen.MANIFEST, manifest)
    (dest / "memory").mkdir()
    (dest / "memory" / "playbook.md").write_text(git(dest, "show", "HEAD:memory/playbook.md"))
    return dest


def variants() -> dict[str, tuple[list[str], dict[str, str]]]:
    """The hook as installed here, and the same without this interpreter's ``.pth``
    startup hooks (an editable install's finder, a sandbox CA patch: ~40 ms here that a
    wheel install does not pay), plus an empty interpreter as the floor."""
    bare = {**_env(), "PYTHONPATH": os.pathsep.join([str(HERE.parent), sysconfig.get_paths()["purelib"]])}
    hook = ["-m", "scarwarden.gate.hook_main", "pre-commit"]  # what the installed hook runs
    return {
        "hook": ([sys.executable, *hook], _env()),
        "hook, no .pth": ([sys.executable, "-S", *hook], bare),
        "python -c pass": ([sys.executable, "-c", "pass"], _env()),
    }


def bench_hook(sizes: list[int], runs: int, work: Path) -> dict[int, float]:
    """Runs alternate between sizes and variants, so all see the same machine load."""
    repos = {}
    for n in sizes:
        t0 = time.perf_counter()
        repos[n] = ledger_repo(n, work)
        stage_commit(repos[n])
        print(f"repo with {n:,} episodes ready in {time.perf_counter() - t0:.1f}s")
    kinds = variants()
    walls: dict[tuple[str, int], list[float]] = {}
    cpus: dict[tuple[str, int], list[float]] = {}
    outs: dict[tuple[str, int], str] = {}
    for i in range(runs + 1):  # the first round warms the caches and is not counted
        for n in sizes:
            for kind, (cmd, env) in kinds.items():
                wall, cpu, out = run_once(cmd, repos[n], env)
                if i:
                    walls.setdefault((kind, n), []).append(wall)
                    cpus.setdefault((kind, n), []).append(cpu)
                    outs[(kind, n)] = out
    for kind in kinds:
        for n in sizes:
            w, c = walls[(kind, n)], cpus[(kind, n)]
            print(
                f"{kind:>15}, {n:>7,} episodes: {statistics.median(w):6.1f} ms wall median "
                f"[{min(w):6.1f} min], {statistics.median(c):6.1f} ms CPU (with git)"
            )
        if kind != "python -c pass":
            print(f"    {outs[(kind, sizes[-1])].splitlines()[-1]}")
    return {n: statistics.median(walls[("hook", n)]) for n in sizes}


def bench_full(n: int, work: Path) -> None:
    repo = work / f"ledger-{n}"
    wall, cpu, out = run_once([sys.executable, "-m", "scarwarden", "check", "--all"], repo)
    print(
        f"check --all, {n:>7,} episodes (every episode parsed): {wall:,.0f} ms wall, "
        f"{cpu:,.0f} ms CPU\n"
        f"    {out.splitlines()[-1]}"
    )
    env = _env()
    from scarwarden.gate.hooks import install

    install(repo)
    start = time.perf_counter()
    subprocess.run(["git", "commit", "-q", "-m", "bench"], cwd=repo, check=True, env=env, capture_output=True)
    with_hook = (time.perf_counter() - start) * 1000
    git(repo, "reset", "-q", "--soft", "HEAD~1")
    start = time.perf_counter()
    subprocess.run(
        ["git", "commit", "-q", "--no-verify", "-m", "bench"],
        cwd=repo,
        check=True,
        env=env,
        capture_output=True,
    )
    without = (time.perf_counter() - start) * 1000
    print(
        f"git commit, {n:>7,} episodes: {with_hook:.0f} ms with the hook, {without:.0f} ms with --no-verify"
    )


def _blob(data: bytes) -> bytes:
    return b"data %d\n" % len(data) + data + b"\n"


def generate_history(path: Path, commits: int, per_commit: int = 3, seed: int = 11) -> Path:
    """A repository with ``commits`` commits, each adding ``per_commit`` episodes and
    every third one a rule citing them (as ``episode add`` and ``distill`` would)."""
    marker = path / ".git" / "bench-history"
    if marker.exists() and marker.read_text() == HISTORY_VERSION:
        return path
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    rng = random.Random(seed)
    rules: list[str] = []
    stream = bytearray()
    count = 0
    for c in range(commits):
        stream += b"commit refs/heads/main\n"
        stream += b"committer Bench <bench@example.com> %d +0000\n" % (1_700_000_000 + c * 600)
        stream += _blob(f"episode: batch {c}".encode())
        new_ids = []
        for _ in range(per_commit):
            ep = "ep-" + "".join(rng.choice(CROCKFORD) for _ in range(10))
            month = 1 + count % 12
            count += 1
            data = {
                "id": ep,
                "at": f"2026-{month:02d}-{1 + count % 28:02d}T10:00:00Z",
                "agent": "writer",
                "task": " ".join(rng.sample(WORDS, 8)).capitalize(),
                "action": " ".join(rng.sample(WORDS, 12)).capitalize(),
                "outcome": " ".join(rng.sample(WORDS, 10)).capitalize(),
                "correction": " ".join(rng.sample(WORDS, 14)).capitalize(),
                "tags": sorted(rng.sample(WORDS, 3)),
                "source": "correction",
            }
            rel = f"memory/episodes/2026/{month:02d}/{ep}.yaml"
            stream += f"M 100644 inline {rel}\n".encode() + _blob(render_episode(data).encode())
            new_ids.append(ep)
        if c % 3 == 0:
            rules.append(
                f"## PB-{len(rules) + 1:02d}: {' '.join(rng.sample(WORDS, 5)).capitalize()}"
                f"\n\n{' '.join(rng.sample(WORDS, 20)).capitalize()}.\n\n"
                f"- Tags: {', '.join(sorted(rng.sample(WORDS, 3)))}\n"
                f"- Learnt in: {', '.join(new_ids)}"
            )
            text = "\n\n".join(["# Playbook", *rules]) + "\n"
            stream += b"M 100644 inline memory/playbook.md\n" + _blob(text.encode())
        stream += b"\n"
    git(path, "fast-import", "--quiet", input=bytes(stream))
    git(path, "gc", "-q")
    git(path, "reset", "-q", "--hard", "main")
    marker.write_text(HISTORY_VERSION)
    return path


def bench_verify(commits: int, runs: int) -> None:
    t0 = time.perf_counter()
    repo = generate_history(CACHE / f"history-{commits}", commits)
    prep = time.perf_counter() - t0
    median, best, out = timed([sys.executable, "-m", "scarwarden", "verify"], repo, runs)
    print(
        f"verify, {commits:,} commits: {median:,.0f} ms median [{best:,.0f} min] "
        f"({runs} runs; history ready in {prep:.1f}s)\n    {out.splitlines()[-1]}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1k vs 10k, 200 commits")
    parser.add_argument("--runs", type=int, default=15, help="timed runs per figure")
    args = parser.parse_args(argv)
    small, large = (1_000, 10_000) if args.quick else (1_000, 100_000)
    commits = 200 if args.quick else 1_000
    git_version = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    print(f"python {sys.version.split()[0]}, {git_version}, load average {os.getloadavg()[0]:.2f}")
    work = Path(tempfile.mkdtemp(prefix="hook-bench-", dir=CACHE if CACHE.exists() else None))
    try:
        medians = bench_hook([small, large], args.runs, work)
        ratio = medians[large] / medians[small]
        verdict = "OK" if medians[large] < 150 and ratio <= 1.5 else "MISSED"
        print(
            f"hook ratio {large:,} / {small:,} episodes: {ratio:.2f}x "
            f"(target < 150 ms and <= 1.5x: {verdict})"
        )
        bench_full(large, work)
        bench_verify(commits, max(3, args.runs // 5))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
