"""Benchmark: the episode ledger and its SQLite index at 1k and 100k episodes.

Every figure is compared with a floor measured in the same run, on the same generated
repository (bench/_gen.py: realistic ~500-byte episodes sharded by month, committed
and packed):

* full rebuild (``scarwarden index --rebuild``) vs reading every blob with one
  ``git cat-file --batch`` plus ``git ls-files -s`` plus parsing each blob with PyYAML's
  C loader: target <= 1.5x;
* refresh after one new committed episode (a fresh ``scarwarden index`` process):
  target < 100 ms at the large size and <= 1.5x the same at the small size;
* ``scarwarden episode add`` (with its commit) vs plain ``git add`` + ``git commit`` of
  one equivalent file: target <= 1.5x;
* cold start: ``scarwarden --help`` and ``scarwarden episode show ID`` wall time, and
  proof that neither imports GitPython (``git``) or ``requests``.

Processes run the installed console script with the interpreter directly (no pyenv
shim) and with Python's bytecode cache enabled (in bench/.cache/pycache), as for an
installed wheel; figures are medians of several runs, measurements interleaved so that
load from other processes hits floors and subjects alike.

    python bench/ledger_bench.py            # 1k and 100k episodes
    python bench/ledger_bench.py --quick    # 1k and 10k
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import yaml  # noqa: E402
from _gen import CACHE_DIR, load_manifest, make_repo  # noqa: E402

from scarwarden import git as sgit  # noqa: E402
from scarwarden import index as sindex  # noqa: E402
from scarwarden.files.episodes import mint_id, render_episode, utc_now  # noqa: E402
from scarwarden.index import load as index_load  # noqa: E402
from scarwarden.repo import open_repo  # noqa: E402

BIN = Path(sys.executable).parent
SCRIPT = BIN / "scarwarden"
#: (episodes, figure, wall, cpu, target, verdict)
ROWS: list[tuple[str, str, str, str, str, str]] = []


def bench_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(CACHE_DIR / "pycache")
    env.update(
        {
            "GIT_AUTHOR_NAME": "Bench",
            "GIT_AUTHOR_EMAIL": "bench@example.com",
            "GIT_COMMITTER_NAME": "Bench",
            "GIT_COMMITTER_EMAIL": "bench@example.com",
        }
    )
    return env


ENV = bench_env()


def scarwarden_cmd(*args: str) -> list[str]:
    if SCRIPT.exists():
        return [sys.executable, str(SCRIPT), *args]
    return [sys.executable, "-m", "scarwarden", *args]


def scarwarden_nosite_cmd(*args: str) -> list[str]:
    """The same command with ``python -S`` and explicit paths: what start-up costs without
    this machine's ``.pth`` hooks (a sandbox CA hook importing certifi, the editable
    install's finder), as with a plain wheel install."""
    import site

    import scarwarden

    source = str(Path(scarwarden.__file__).resolve().parent.parent)
    code = (
        f"import sys; sys.path.insert(0, {source!r}); "
        f"sys.path.extend({site.getsitepackages()!r}); "
        f"sys.argv = ['scarwarden', *{list(args)!r}]; from scarwarden.cli import main; main()"
    )
    return [sys.executable, "-S", "-c", code]


@dataclass
class Sample:
    """Wall time and CPU time (this process plus every child it waited for)."""

    wall: float
    cpu: float


def _cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def measure(fn: Callable[[], Any]) -> Sample:
    cpu, start = _cpu(), time.perf_counter()
    fn()
    return Sample(time.perf_counter() - start, _cpu() - cpu)


def run(cmd: list[str], cwd: Path) -> Sample:
    def call() -> None:
        proc = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed: {proc.stderr.decode()[-2000:]}")

    return measure(call)


def med(samples: list[Sample]) -> Sample:
    return Sample(statistics.median(s.wall for s in samples), statistics.median(s.cpu for s in samples))


def fmt(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 10 else f"{seconds:.1f} s"


def record(
    size: str, figure: str, value: Sample | str, target: str, ok: bool | None, base: Sample | None = None
) -> None:
    """One row; with ``base``, the wall and CPU figures are also given as ratios to it."""
    if isinstance(value, str):
        wall_text, cpu_text = value, ""
    else:
        wall_text, cpu_text = fmt(value.wall), fmt(value.cpu)
        if base is not None:
            wall_text += f" = {value.wall / base.wall:.2f}x"
            cpu_text += f" = {value.cpu / base.cpu:.2f}x"
    verdict = "" if ok is None else ("PASS" if ok else "MISS")
    ROWS.append((size, figure, wall_text, cpu_text, target, verdict))
    print(f"  {figure}: {wall_text} wall, cpu {cpu_text or '-'}  (target {target}) {verdict}", flush=True)


# -- floors ---------------------------------------------------------------------------


def floor_read_parse(root: Path, parts: dict[str, list[float]]) -> None:
    """git ls-files -s + one cat-file --batch of every episode blob + C-loader parse."""
    loader = yaml.CSafeLoader
    t0 = time.perf_counter()
    entries = sgit.ls_files_stage(root, "memory/episodes")
    t1 = time.perf_counter()
    blobs = sgit.cat_file_batch(root, [e.blob for e in entries])
    t2 = time.perf_counter()
    for raw in blobs:
        if raw is not None:
            yaml.load(raw, Loader=loader)  # noqa: S506 - the safe C loader
    t3 = time.perf_counter()
    for key, value in (("ls-files -s", t1 - t0), ("cat-file --batch", t2 - t1), ("C-loader parse", t3 - t2)):
        parts.setdefault(key, []).append(value)


# -- helpers that change the repository -------------------------------------------------


def new_episode_file(n: int) -> tuple[str, bytes]:
    data = {
        "id": mint_id(),
        "at": utc_now(),
        "agent": "writer",
        "task": f"Draft the benchmark post number {n} for LinkedIn announcing the beta",
        "action": "Opened with a feature list and three emoji; hashtags at the top",
        "outcome": "Engagement 40% below the team's average. Ines raised it in the review.",
        "correction": "Open with the reader's pain point and put hashtags at the end",
        "corrected_by": "editor",
        "tags": ["linkedin", "post", "hook"],
        "source": "correction",
    }
    at = data["at"]
    rel = f"memory/episodes/{at[0:4]}/{at[5:7]}/{data['id']}.yaml"
    return rel, render_episode(data).encode("utf-8")


def commit_with_git(root: Path, rel: str, raw: bytes) -> None:
    """What `episode add` replaces: write the file, `git add`, `git commit`."""
    target = root / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(raw)
    subprocess.run(["git", "add", "--", rel], cwd=root, env=ENV, check=True)
    subprocess.run(["git", "commit", "-q", "-m", f"episode: {rel}"], cwd=root, env=ENV, check=True)


# -- the measurements -----------------------------------------------------------------


def bench_size(n: int, work: Path, reps: int, heavy_reps: int) -> dict[str, Sample]:
    label = f"{n:,}"
    print(f"\n== {label} episodes ==", flush=True)
    start = time.perf_counter()
    root = make_repo(n, work / f"repo-{n}")
    manifest = load_manifest(root)
    print(f"  repository ready in {time.perf_counter() - start:.1f}s: {root}", flush=True)
    repo = open_repo(root)
    run(scarwarden_cmd("index"), root)  # builds the index, warms the bytecode cache
    out: dict[str, Sample] = {}

    # Rebuild vs its floor, interleaved so that load from elsewhere hits both alike.
    parts: dict[str, list[float]] = {}
    floors: list[Sample] = []
    single: list[Sample] = []
    parallel: list[Sample] = []
    process: list[Sample] = []
    auto = index_load.default_workers(n)
    for _ in range(heavy_reps):
        floors.append(measure(lambda: floor_read_parse(root, parts)))
        single.append(measure(lambda: sindex.rebuild(repo, workers=1)))
        if auto > 1:
            parallel.append(measure(lambda: sindex.rebuild(repo, workers=auto)))
        process.append(run(scarwarden_cmd("index", "--rebuild"), root))
    floor = med(floors)
    ls_files = med([run(["git", "ls-files", "-s"], root) for _ in range(reps)])
    print(
        "  floor = "
        + " + ".join(f"{k} {fmt(statistics.median(v))}" for k, v in parts.items())
        + f" = {fmt(floor.wall)} wall, {fmt(floor.cpu)} cpu; "
        f"`git ls-files -s` alone as a process: {fmt(ls_files.wall)}",
        flush=True,
    )
    record(label, "floor: ls-files + cat-file --batch + C-loader parse", floor, "-", None)
    for name, values in (
        ("rebuild in-process, parsing in this process", single),
        (f"rebuild in-process, {auto} forked parse workers", parallel),
        ("`scarwarden index --rebuild` (a process, default workers)", process),
    ):
        if values:
            got = med(values)
            record(label, name, got, "<= 1.5x floor", got.wall / floor.wall <= 1.5, floor)

    # Refresh after one new committed episode: a fresh `scarwarden index` process.
    refresh: list[Sample] = []
    nothing: list[Sample] = []
    nosite: list[Sample] = []
    inproc: list[Sample] = []
    for i in range(reps):
        rel, raw = new_episode_file(200 + i)
        commit_with_git(root, rel, raw)
        inproc.append(measure(lambda: sindex.open_index(repo).close()))
        rel, raw = new_episode_file(i)
        commit_with_git(root, rel, raw)
        refresh.append(run(scarwarden_cmd("index"), root))
        nothing.append(run(scarwarden_cmd("index"), root))
        rel, raw = new_episode_file(100 + i)
        commit_with_git(root, rel, raw)
        nosite.append(run(scarwarden_nosite_cmd("index"), root))
    out["refresh"] = med(refresh)
    record(
        label,
        "refresh after 1 new committed episode (`scarwarden index`)",
        out["refresh"],
        "< 100 ms",
        out["refresh"].wall < 0.100,
    )
    record(label, "the same, `python -S` (no site .pth hooks, as a wheel install)", med(nosite), "-", None)
    out["refresh_inproc"] = med(inproc)
    record(
        label,
        "the refresh alone, in-process (`open_index` after 1 new commit)",
        out["refresh_inproc"],
        "-",
        None,
    )
    record(label, "`scarwarden index` when nothing changed", med(nothing), "-", None)

    # episode add (with commit) vs git add + git commit of an equivalent file.
    plain: list[Sample] = []
    ours: list[Sample] = []
    for i in range(reps):
        rel, raw = new_episode_file(1000 + i)
        plain.append(measure(partial(commit_with_git, root, rel, raw)))
        ours.append(
            run(
                scarwarden_cmd(
                    "episode",
                    "add",
                    "--task",
                    f"Draft the benchmark post number {i} for LinkedIn",
                    "--action",
                    "Opened with a feature list and three emoji; hashtags at the top",
                    "--outcome",
                    "Engagement 40% below the team's average. Ines raised it.",
                    "--correction",
                    "Open with the reader's pain point and put hashtags at the end",
                    "--corrected-by",
                    "editor",
                    "--agent",
                    "writer",
                    "--tag",
                    "linkedin,post,hook",
                    "--source",
                    "correction",
                ),
                root,
            )
        )
    git_base = med(plain)
    record(label, "baseline: write + `git add` + `git commit` of one file", git_base, "-", None)
    got = med(ours)
    record(
        label,
        "`scarwarden episode add` (writes, commits)",
        got,
        "<= 1.5x git",
        got.wall / git_base.wall <= 1.5,
        git_base,
    )

    # Cold start.
    ep_id = manifest["episode_ids"][len(manifest["episode_ids"]) // 2]
    record(
        label,
        "`scarwarden --help`",
        med([run(scarwarden_cmd("--help"), root) for _ in range(reps)]),
        "-",
        None,
    )
    out["show"] = med([run(scarwarden_cmd("episode", "show", ep_id), root) for _ in range(reps)])
    record(label, "`scarwarden episode show ID`", out["show"], "-", None)
    return out


def heavy_modules(args: list[str], cwd: Path) -> set[str]:
    """Top-level modules a scarwarden process imported, from ``-X importtime``."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *scarwarden_cmd(*args)[1:]],
        cwd=cwd,
        env=ENV,
        capture_output=True,
        text=True,
    )
    names = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    if not names:
        raise RuntimeError(f"no import trace from scarwarden {' '.join(args)}: {proc.stderr}")
    return names & {"git", "requests", "urllib3", "flask", "mcp", "numpy"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1k and 10k episodes")
    parser.add_argument("--sizes", help="comma-separated episode counts (overrides)")
    parser.add_argument("--reps", type=int, default=7, help="repetitions of quick figures")
    parser.add_argument(
        "--heavy-reps", type=int, default=3, help="repetitions of full rebuilds and their floor"
    )
    parser.add_argument("--keep", action="store_true", help="keep the working copies")
    args = parser.parse_args(argv)
    sizes = (
        [int(s) for s in args.sizes.split(",")]
        if args.sizes
        else [1000, 10_000]
        if args.quick
        else [1000, 100_000]
    )
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores, git "
        f"{subprocess.run(['git', '--version'], capture_output=True, text=True).stdout.split()[-1]}, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    work = Path(tempfile.mkdtemp(prefix="scarwarden-ledger-bench-"))
    results: dict[int, dict[str, Sample]] = {}
    try:
        python = med([run([sys.executable, "-c", "pass"], work) for _ in range(args.reps)])
        record("-", "interpreter alone (`python -c pass`, this machine's site-packages)", python, "-", None)
        bare = med([run([sys.executable, "-S", "-c", "pass"], work) for _ in range(args.reps)])
        record("-", "interpreter alone without site (`python -S -c pass`)", bare, "-", None)
        for n in sizes:
            results[n] = bench_size(n, work, args.reps, args.heavy_reps)
        small, large = sizes[0], sizes[-1]
        root = work / f"repo-{large}"
        if large != small:
            record(
                f"{large:,}",
                f"refresh at {large:,} vs at {small:,}",
                results[large]["refresh"],
                "<= 1.5x",
                results[large]["refresh"].wall / results[small]["refresh"].wall <= 1.5,
                results[small]["refresh"],
            )
            record(
                f"{large:,}",
                f"refresh alone (in-process) at {large:,} vs at {small:,}",
                results[large]["refresh_inproc"],
                "-",
                None,
                results[small]["refresh_inproc"],
            )
            record(
                f"{large:,}",
                f"episode show at {large:,} vs at {small:,}",
                results[large]["show"],
                "-",
                None,
                results[small]["show"],
            )
        ep_id = load_manifest(root)["episode_ids"][0]
        for cmd in (["--help"], ["episode", "show", ep_id]):
            heavy = heavy_modules(cmd, root)
            record(
                f"{large:,}",
                f"modules imported by `scarwarden {' '.join(cmd[:2])}`",
                "none of git/requests/urllib3/flask/mcp/numpy"
                if not heavy
                else "imports " + ", ".join(sorted(heavy)),
                "no GitPython, no requests",
                not ({"git", "requests"} & heavy),
            )
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept {work}")
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")
    print("\n| episodes | figure | wall (median) | cpu (median) | target | verdict |")
    print("|---|---|---|---|---|---|")
    for row in ROWS:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
