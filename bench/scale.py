"""Scale benchmark (issue 30): what each check costs at 1k, 10k, 100k (and 1M) episodes.

Builds each memory once (``bench/_gen.py``: one commit of N episodes) plus, on top of
it, 100 commits of one episode each and one commit whose episode carries a recall
receipt for a task that ACTs; the prepared repositories are cached beside the
generated ones (``SCARWARDEN_BENCH_CACHE`` or ``bench/.cache``). Every figure is a
median over runs that alternate between the sizes, so all see the same machine load,
which is printed with each table; ratios are against the smallest size measured in the
same run.

    python bench/scale.py                       # 1k, 10k, 100k
    python bench/scale.py --million             # and 1M (~17 min of CPU, ~70 min at load 10; once)
    python bench/scale.py --sizes 1000,10000 --runs 3
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import _gen  # noqa: E402

#: Bump when what prepare() adds changes.
SCALE_VERSION = 1
HISTORY = 100  # commits of one episode each on top of the generated one
INFO = "scale.json"
_NEXT = itertools.count(1000)  # numbers of the episodes the rows add


def _env() -> dict[str, str]:
    env = {**os.environ, **_gen.IDENTITY, "SCARWARDEN_NO_MODEL": "1"}
    # PYTHONDONTWRITEBYTECODE (set in some sandboxes) would compile every module on
    # every run (~0.2 s): not what an installed tool pays.
    for var in ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "SCARWARDEN_SKIP", "PYTHONDONTWRITEBYTECODE"):
        env.pop(var, None)
    return env


def sh(
    cwd: Path, *cmd: str, input: str | None = None, ok: bool = True, env: dict[str, str] | None = None
) -> str:
    proc = subprocess.run(
        list(cmd), cwd=cwd, input=input, capture_output=True, text=True, env={**_env(), **(env or {})}
    )
    if ok and proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed in {cwd}:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return proc.stdout


def sw(*args: str) -> list[str]:
    return [sys.executable, "-m", "scarwarden", *args]


def timed(cwd: Path, cmd: list[str], *, input: str | None = None, env: dict[str, str] | None = None) -> float:
    """Wall seconds of one run of ``cmd`` (which must succeed), ``env`` added to the
    environment."""
    start = time.perf_counter()
    sh(cwd, *cmd, input=input, env=env)
    return time.perf_counter() - start


# -- preparing the memories -------------------------------------------------------


def _data(i: int, n: int, task: str | None = None) -> dict[str, object]:
    """The i-th extra episode of the n-episode memory."""
    return {
        "id": f"ep-{i:010d}",
        "at": f"2026-11-29T10:{i // 60 % 60:02d}:{i % 60:02d}Z",
        "agent": "writer",
        "task": task or f"Write the webinar invite number {i} for {n} readers",
        "action": "Gave the start time without a timezone",
        "outcome": "Attendees asked which 10:00 was meant",
        "tags": ["webinar", "timezone"],
        "source": "outcome",
    }


def _episode(i: int, n: int, data: dict[str, object] | None = None) -> tuple[str, str]:
    """(path, text) of the i-th extra episode (or of ``data``)."""
    from scarwarden.files.episodes import render_episode

    data = data or _data(i, n)
    return f"memory/episodes/2026/11/{data['id']}.yaml", render_episode(data)


def _history(repo: Path, n: int) -> None:
    """HISTORY commits of one episode each, through one ``git fast-import``."""
    parts: list[bytes] = []
    when = int(time.time()) - 86_400
    for i in range(HISTORY):
        path, text = _episode(i, n)
        msg = f"episode {i}\n".encode()
        raw = text.encode()
        parts.append(b"commit refs/heads/main\ncommitter Bench <bench@example.com> %d +0000\n" % (when + i))
        parts.append(b"data %d\n%s\n" % (len(msg), msg))
        if i == 0:
            parts.append(b"from refs/heads/main^0\n")
        parts.append(b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(raw), raw))
    parts.append(b"done\n")
    _gen._git(repo, "fast-import", "--quiet", "--done", "--force", input=b"".join(parts))
    _gen._git(repo, "reset", "-q", "--hard", "main")


def _acting_task(repo: Path) -> str:
    """A task recall answers with ACT: the first rule text that does."""
    from scarwarden.files import playbook as pb
    from scarwarden.recall.engine import recall_task
    from scarwarden.repo import open_repo

    memory = open_repo(repo)
    book = pb.parse((repo / "memory/playbook.md").read_text())
    for rule in book.rules:
        task = rule.text.split(". This applies to ")[-1].rstrip(".")
        if recall_task(memory, task, log=False).verdict == "ACT":
            return task
    raise SystemExit("no rule text recalls with ACT")


def _with_receipt(repo: Path, n: int, task: str) -> None:
    """Commit one episode carrying the receipt of recalling ``task``."""
    from scarwarden.recall.engine import recall_task
    from scarwarden.repo import open_repo

    receipt = recall_task(open_repo(repo), task, log=False).receipt.to_json()
    data = {**_data(HISTORY, n, task), "recalled": receipt, "rules_applied": receipt["rules"][:1]}
    path, text = _episode(HISTORY, n, data)
    (repo / path).write_text(text)
    sh(repo, "git", "add", path)
    sh(repo, "git", "commit", "-q", "--no-verify", "-m", "an episode with a receipt")


def prepare(n: int) -> Path:
    """The cached prepared memory of ``n`` episodes (built on first use)."""
    path = _gen.CACHE_DIR / f"scale-v{SCALE_VERSION}-n{n}"
    if (path / ".git" / INFO).exists():
        if not (path / ".git" / "scarwarden" / "ledger").exists():
            warm_ledger(path)
        return path
    shutil.rmtree(path, ignore_errors=True)
    t0 = time.perf_counter()
    _gen.cached_repo(n)
    t1 = time.perf_counter()
    _gen.make_repo(n, path)
    _history(path, n)
    sh(path, *sw("index"))
    task = _acting_task(path)
    _with_receipt(path, n, task)
    sh(path, *sw("index"))
    sh(path, "git", "gc", "-q")
    warm_ledger(path)
    gen = _gen.load_manifest(path)["seconds"]
    info = {"task": task, "generated": gen, "cached_repo": round(t1 - t0, 1)}
    info["prepared"] = round(time.perf_counter() - t1, 1)
    (path / ".git" / INFO).write_text(json.dumps(info))
    return path


def warm_ledger(path: Path) -> None:
    """The ledger statistics of HEAD~1's episodes folder, cached in the git folder as
    the base branch's CI run leaves them (what the CI row restores; every copy starts
    with them: at 1M episodes deriving them from scratch takes minutes, paid once here,
    not once per copy)."""
    sh(path, sys.executable, "-m", "scarwarden.gate.ledger", "HEAD~1")


def info(repo: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((repo / ".git" / INFO).read_text())
    return data


def copy(src: Path, dest: Path) -> Path:
    """A working copy (``cp -a``: file times kept, git's index re-stat'ed). The episode
    files are hard links (``cp -al``: a million files copy in minutes, and no row edits
    one in place: git and ``episode add`` write new files); the git folder and the
    SQLite index (written in place) are copied."""
    dest.mkdir()
    for entry in sorted(src.iterdir()):
        flags = "-al" if entry.name == "memory" else "-a"
        subprocess.run(["cp", flags, str(entry), str(dest / entry.name)], check=True)
    sh(dest, "git", "update-index", "-q", "--refresh")
    return dest


def clone(src: Path, dest: Path) -> Path:
    """A fresh clone as CI makes one (objects hard-linked: the clone costs nothing)."""
    sh(src.parent, "git", "clone", "-q", "--no-checkout", str(src), str(dest))
    return dest


# -- the rows ----------------------------------------------------------------------


class Sizes:
    """Per-size work copies, made once per run."""

    def __init__(self, sizes: list[int], work: Path) -> None:
        self.sizes, self.work = sizes, work
        self.src = {n: prepare(n) for n in sizes}
        self._copies: dict[tuple[str, int], Path] = {}

    def copy(self, kind: str, n: int, make: Callable[[Path, Path], Path] = copy) -> Path:
        if (kind, n) not in self._copies:
            self._copies[(kind, n)] = make(self.src[n], self.work / f"{kind}-{n}")
        return self._copies[(kind, n)]


def _stage(repo: Path, i: int, n: int) -> str:
    path, text = _episode(i, n)
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(text)
    sh(repo, "git", "add", path)
    return path


def row_fresh_clone(s: Sizes, n: int, runs: dict[str, list[float]]) -> None:
    """CI: ``check --from-ref HEAD~1`` on a new clone, with and without the ledger
    statistics of the base's tree that a CI cache would restore."""
    base = s.copy("base", n)
    cache = base / ".git" / "scarwarden" / "ledger"
    if ("base", n) not in _WARMED:  # what the base branch's CI run left: the base
        # tree's statistics and the names of its month folders, in this code's format
        warm_base(base, n)
        _WARMED.add(("base", n))
    k = next(_NEXT)
    fresh = clone(s.src[n], s.work / f"fresh-{n}-{k}")
    shutil.copytree(cache, fresh / ".git" / "scarwarden" / "ledger")
    cmd = sw("check", "--from-ref", "HEAD~1", "--to-ref", "HEAD")
    runs.setdefault("ci, restored cache", []).append(timed(fresh, cmd))
    runs.setdefault("ci, again (cache filled)", []).append(timed(fresh, cmd))
    shutil.rmtree(fresh)


_WARMED: set[tuple[str, int]] = set()


def _entry_format(entry: Path) -> str | None:
    try:
        return str(json.loads(entry.read_bytes().partition(b"\n")[0])["format"])
    except (OSError, ValueError, KeyError):
        return None


def warm_base(base: Path, n: int) -> None:
    """Warm the base copy's ledger cache with this code (``python -m
    scarwarden.gate.ledger HEAD~1``, what the CI action's last step runs), from the
    prepared memory's entry (written by the code that prepared it: an entry of the
    previous format is converted, no episode read), and check that the CI row restores
    this code's format. Says what it found and how long it took: never O(total) silently."""
    try:
        from scarwarden.gate.ledger_store import CACHE_FORMAT
    except ImportError:  # the code before the split (a baseline run)
        from scarwarden.gate.ledger import CACHE_FORMAT  # type: ignore[attr-defined,no-redef]

    tree = sh(base, "git", "rev-parse", "HEAD~1:memory/episodes").strip()
    entry = base / ".git" / "scarwarden" / "ledger" / f"{tree}.json"
    before = _entry_format(entry)
    start = time.perf_counter()
    sh(base, sys.executable, "-m", "scarwarden.gate.ledger", "HEAD~1")
    took = time.perf_counter() - start
    after = _entry_format(entry)
    how = "derived from every episode (O(total))" if before is None else f"from an entry in {before}"
    print(f"  {n:,}: the base's ledger cache, {how}: {after} in {took:.1f}s")
    if after != CACHE_FORMAT:
        raise SystemExit(f"the base's ledger cache is in {after}, not this code's {CACHE_FORMAT}")


def row_fresh_clone_nocache(s: Sizes, n: int, runs: dict[str, list[float]]) -> None:
    fresh = clone(s.src[n], s.work / f"bare-{n}")
    cmd = sw("check", "--from-ref", "HEAD~1", "--to-ref", "HEAD")
    runs.setdefault("ci, fresh clone, no cache", []).append(timed(fresh, cmd))
    shutil.rmtree(fresh)


def row_hooks(s: Sizes, n: int, runs: dict[str, list[float]]) -> None:
    """The pre-commit check of one staged episode; the reference-transaction hook on a
    one-commit and a 50-episode move (``git update-ref`` with the hooks installed)."""
    repo = s.copy("hooks", n)
    if not (repo / ".git" / "hooks" / "reference-transaction").exists():
        sh(repo, *sw("hooks", "install"))
        sh(repo, *sw("check", "--from-ref", "HEAD~2", "--to-ref", "HEAD"))  # a warm cache
    k = next(_NEXT)
    path = _stage(repo, k, n)
    hook = [str(repo / ".git" / "hooks" / "pre-commit")]  # the script; it starts the gate's entry
    # Run by hand after 'git add': the index's cache tree is out of date, so the hook
    # diffs git's index against HEAD (reading every entry of the index).
    runs.setdefault("pre-commit hook, by hand after git add", []).append(timed(repo, hook))
    # As 'git commit' runs it: git first brings the cache tree up to date and writes its
    # trees, as 'git write-tree' does (builtin/commit.c, prepare_index), then runs the
    # hook with GIT_INDEX_FILE set; the hook diffs that tree against HEAD's.
    sh(repo, "git", "write-tree")
    index = {"GIT_INDEX_FILE": str(repo / ".git" / "index")}
    runs.setdefault("pre-commit hook", []).append(timed(repo, hook, env=index))
    old = sh(repo, "git", "rev-parse", "HEAD").strip()
    for kind, count in (("ref hook, 1-episode move", 1), ("ref hook, 50-episode move", 50)):
        extra = [_stage(repo, next(_NEXT), n) for _ in range(count - 1)]
        tree = sh(repo, "git", "write-tree").strip()
        new = sh(repo, "git", "commit-tree", tree, "-p", old, "-m", "move").strip()
        runs.setdefault(kind, []).append(timed(repo, ["git", "update-ref", "refs/heads/main", new, old]))
        sh(repo, "git", "-c", "core.hooksPath=/dev/null", "update-ref", "refs/heads/main", old)
        if extra:
            sh(repo, "git", "rm", "-q", "--cached", *extra)
    sh(repo, "git", "rm", "-q", "--cached", path)
    # A write door's commit with the hooks installed: the door's mark spares the
    # reference-transaction hook's Python (the pre-commit hook still runs).
    add = sw("episode", "add", "--task", f"Write invite {k}", "--outcome", "Sent", "--agent", "writer")
    runs.setdefault("episode add, hooks installed", []).append(timed(repo, add))
    sh(repo, "git", "-c", "core.hooksPath=/dev/null", "reset", "-q", old)


def row_index(s: Sizes, n: int, runs: dict[str, list[float]]) -> None:
    repo = s.copy("index", n)
    k = next(_NEXT)
    _stage(repo, k, n)
    sh(repo, "git", "commit", "-q", "--no-verify", "-m", "one")
    runs.setdefault("index refresh, one new episode", []).append(timed(repo, sw("index")))
    runs.setdefault("index, nothing changed", []).append(timed(repo, sw("index")))


def row_verify(s: Sizes, n: int, runs: dict[str, list[float]]) -> None:
    repo = s.copy("index", n)
    runs.setdefault("verify of the last 100 commits", []).append(
        timed(repo, sw("verify", f"HEAD~{HISTORY}..HEAD"))
    )


def row_recall(s: Sizes, n: int, runs: dict[str, list[float]]) -> None:
    repo = s.copy("index", n)
    task = str(info(s.src[n])["task"])
    start = time.perf_counter()
    out = json.loads(sh(repo, *sw("recall", "--json", task)))
    runs.setdefault("cold recall of a task that ACTs", []).append(time.perf_counter() - start)
    assert out["verdict"] in ("ACT", "ACT_AND_FLAG"), out["verdict"]


def row_git(s: Sizes, n: int, runs: dict[str, list[float]]) -> None:
    """``git status``; ``episode add`` against plain ``git add`` + ``git commit``, with
    the settings ``init`` gives and without (hooks installed in neither)."""
    for label, settings in (("", []), (", scale settings", None)):
        repo = s.copy(f"git{label and '-s'}", n)
        if settings is None and not (repo / ".git" / "scale-set").exists():
            from scarwarden.git.scale import apply_scale_settings

            apply_scale_settings(repo)
            sh(repo, "git", "status", "--porcelain")  # the split index, written once
            (repo / ".git" / "scale-set").write_text("")
        runs.setdefault(f"git status{label}", []).append(timed(repo, ["git", "status", "--porcelain"]))
        k = next(_NEXT)
        path, text = _episode(k, n)
        (repo / path).write_text(text)
        start = time.perf_counter()
        sh(repo, "git", "add", path)
        sh(repo, "git", "commit", "-q", "-m", "plain")
        runs.setdefault(f"git add + git commit{label}", []).append(time.perf_counter() - start)
        add = sw("episode", "add", "--task", f"Write invite {k}", "--outcome", "Sent", "--agent", "writer")
        runs.setdefault(f"episode add{label}", []).append(timed(repo, add))


def row_audit(s: Sizes, n: int, runs: dict[str, list[float]]) -> None:
    """Each run writes a new folder, as a CI job does, kept until the end: on a file
    system with no journal (this machine's ext4) a file made within a minute or so of
    many being removed costs the kernel a scan past each of them (``recently_deleted``),
    ~4-5 s of system CPU for 10k pages after the last run's 10k were removed."""
    if n > 10_000:
        return
    repo = s.copy("index", n)
    out = s.work / f"audit-{n}-{next(_NEXT)}"
    runs.setdefault("audit --html", []).append(timed(repo, sw("audit", "--html", str(out))))


#: The rows that read the whole ledger by design (O(total)) stop here: at 1M each is
#: minutes (check --all 152 s, index build 163 s, measured once: docs/scaling.md).
WHOLE_MAX = 100_000


def timed_cpu(cwd: Path, cmd: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system of the process and what it waited for) of one
    run: on a loaded machine the CPU time is the steadier figure for an O(total) row."""
    import resource

    def used() -> float:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    before = used()
    wall = timed(cwd, cmd)
    return wall, used() - before


def _whole(runs: dict[str, list[float]], name: str, cwd: Path, cmd: list[str]) -> None:
    wall, cpu = timed_cpu(cwd, cmd)
    runs.setdefault(name, []).append(wall)
    runs.setdefault(f"{name} (CPU)", []).append(cpu)


def row_distill(s: Sizes, n: int, runs: dict[str, list[float]]) -> None:
    """``distill --offline --dry-run``: the deterministic distiller over the whole
    ledger, nothing written (issue 30 point 3: within 10 s at 10k)."""
    if n > WHOLE_MAX:
        return
    repo = s.copy("index", n)
    _whole(runs, "distill --offline --dry-run", repo, sw("distill", "--offline", "--dry-run"))


def row_whole(s: Sizes, n: int, runs: dict[str, list[float]]) -> None:
    """What reads every episode on purpose: ``check --all`` and an index build
    (``index --rebuild``), O(total) by design."""
    if n > WHOLE_MAX:
        return
    repo = s.copy("index", n)
    _whole(runs, "check --all", repo, sw("check", "--all"))
    _whole(runs, "index build (index --rebuild)", repo, sw("index", "--rebuild"))


def recall_pointer() -> str:
    """The recall-speed row (100k rules, first pass, CPU p50 against FTS5 and bm25s)
    is bench/recall.py's: in-process, query by query, not a process per figure."""
    return (
        "recall, 100k rules, first pass (CPU p50) against FTS5 and bm25s: "
        "nice -n 10 python bench/recall.py --cpu --sizes 100000 (docs/benchmarks.md, Recall)"
    )


def sizes_on_disk(s: Sizes, n: int) -> dict[str, float]:
    """The ledger's files and the SQLite index, as this code builds it: the cached
    memory's index may be of an older schema, which a copy rebuilds on its first use."""
    repo = s.src[n]
    ledger = sum(f.stat().st_size for f in (repo / "memory" / "episodes").rglob("*.yaml"))
    fresh = s.copy("index", n)
    sh(fresh, *sw("index"))
    _built_by_this_code(fresh / ".scarwarden" / "index.db")
    index = (fresh / ".scarwarden" / "index.db").stat().st_size
    return {"ledger MB": ledger / 1e6, "index MB": index / 1e6, "index / ledger": index / ledger}


def _built_by_this_code(path: Path) -> None:
    """Stop unless the index at ``path`` has this code's schema (the size row measures
    what this code builds, never the cached memory's index)."""
    import sqlite3

    from scarwarden.index.schema import SCHEMA_VERSION

    conn = sqlite3.connect(path)
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    finally:
        conn.close()
    if row is None or row[0] != str(SCHEMA_VERSION):
        raise SystemExit(f"{path}: schema {row and row[0]}, this code builds {SCHEMA_VERSION}")


ROWS: dict[str, Callable[[Sizes, int, dict[str, list[float]]], None]] = {
    "hooks": row_hooks,
    "ci": row_fresh_clone,
    "index": row_index,
    "verify": row_verify,
    "recall": row_recall,
    "git": row_git,
    "audit": row_audit,
    "distill": row_distill,
    "whole": row_whole,
}


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def report(sizes: list[int], results: dict[int, dict[str, list[float]]]) -> None:
    names = list(dict.fromkeys(k for n in sizes for k in results[n]))
    head = " | ".join(f"{n:,}" for n in sizes)
    ratio = " | ".join(f"{n:,} / {sizes[0]:,}" for n in sizes[1:])
    print(f"\n| operation (median ms) | {head} | {ratio} |")
    print("|---" * (1 + 2 * len(sizes) - 1) + "|")
    for name in names:
        med = {n: statistics.median(results[n][name]) * 1000 for n in sizes if results[n].get(name)}
        cells = " | ".join(f"{med[n]:.0f}" if n in med else "" for n in sizes)
        first = med.get(sizes[0])
        ratios = " | ".join(f"{med[n] / first:.2f}x" if first and n in med else "" for n in sizes[1:])
        print(f"| {name} | {cells} | {ratios} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="comma-separated episode counts")
    parser.add_argument("--million", action="store_true", help="add 1,000,000 episodes")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per figure")
    parser.add_argument("--rows", default=",".join(ROWS), help=f"which rows ({', '.join(ROWS)})")
    parser.add_argument("--no-cache-ci", action="store_true", help="also CI without a cache (O(total))")
    args = parser.parse_args(argv)
    sizes = [int(x) for x in args.sizes.split(",")] + ([1_000_000] if args.million else [])
    print(f"load average before: {load()}")
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="scale-") as tmp:
        s = Sizes(sizes, Path(tmp))
        print(f"memories ready in {time.perf_counter() - t0:.1f}s (load {load()})")
        for n in sizes:
            i = info(s.src[n])
            print(
                f"  {n:,}: generated in {i['generated']} s, prepared in {i['prepared']} s; task {i['task']!r}"
            )
        results: dict[int, dict[str, list[float]]] = {n: {} for n in sizes}
        rows = [ROWS[r] for r in args.rows.split(",") if r]
        for n in sizes:  # a warm-up round, not counted
            for row in rows:
                row(s, n, {})
        for _ in range(args.runs):
            for n in sizes:
                for row in rows:
                    row(s, n, results[n])
        if args.no_cache_ci:
            for n in sizes:
                row_fresh_clone_nocache(s, n, results[n])
        report(sizes, results)
        print(f"\n{recall_pointer()}")
        print(f"\nload average after: {load()}")
        for n in sizes:
            print(f"  {n:,}: " + ", ".join(f"{k} {v:.2f}" for k, v in sizes_on_disk(s, n).items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
