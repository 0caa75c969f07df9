"""Recall speed: Scarwarden's recall beside rank_bm25 and SQLite FTS5, same rules, same run.

Generated playbooks of 1k, 10k and 100k rules (about 20 words and 3-6 tags each, words
drawn from a 20,000-word vocabulary with a Zipf-like spread), written as a real
``memory/playbook.md`` in a temporary git repository and indexed through the library
(``open_index``). The rules cite real episodes, as distilled rules do: a ledger of one
episode per 10 rules (at least 100), each episode's task and correction sharing a few
words with the rule it came from; most rules cite 1-2 episodes, 15% cite 3-10 and 5%
cite 11-40, and a fifth of the episodes applied a rule (some corrected), so recall's
ledger paths (the words of a rule's closest cited episode, its evidence quote, the
struggling-rule check) are measured. ``--one-episode``: the earlier corpus, every rule
citing the same one episode. 300 queries of about 8 words (some words and a tag of one
rule, the rest random), timed in-process, interleaved query by query (each query runs
through every engine before the next), so a change of load hits all alike:

* ``scarwarden``: :func:`scarwarden.recall.engine.recall` on the open index (top 10);
* ``rank_bm25``: ``BM25Okapi.get_scores`` over the same stemmed tokens, then the top 10;
* ``fts5``: an FTS5 table of the same titles and texts (porter tokenizer),
  ``ORDER BY bm25(...) LIMIT 10`` with the query words OR-ed;
* ``bm25s``: ``bm25s.BM25`` over the same stemmed tokens, ``retrieve`` top 10 (skipped,
  with a line saying so, when bm25s is not installed: ``pip install '.[bench]'``).

Every engine's index is in memory before timing: FTS5's table and bm25s' arrays are
built in the run, and ours (a cached repository's) is read through once (:func:`warm`)
into the page cache. Ours is timed on the first pass (``scarwarden``: one process
meeting these tasks for the first time, what it keeps between recalls, the episodes'
citing rules and the candidates' stem counts, filling as words come back) and again
after it (``scarwarden again``: the same tasks a second time). Ratios
are against the first pass.

Then the wall and CPU time of a cold ``scarwarden recall "..."`` process at 1k rules, run
as the console script ``pip install`` writes (:func:`console_script`; ``python -m
scarwarden`` beside it), against ``python -c pass`` (both in a plain venv:
:func:`plain_python`), which heavy
modules that process imported (GitPython and requests must not be among them), and,
with valgrind installed, the instructions each process runs (:func:`instructions`: the
same count whatever the load).

    python bench/recall.py              # 1k, 10k, 100k
    python bench/recall.py --quick      # 1k, 10k
    python bench/recall.py --sizes 10000 --queries 100
    python bench/recall.py --cpu        # per-query CPU time: steadier when the machine is busy
    python bench/recall.py --no-cache   # without recall's in-memory postings cache
    python bench/recall.py --one-episode  # the corpus where every rule cites one episode
    python bench/recall.py --cpu --against main   # this code beside main's, query by query

``--against REV``: the same recalls through this checkout's code and through REV's
(``git archive`` of its ``scarwarden`` package), each in a process of its own, alternating
task by task (A, B, A, B...; which goes first alternates too), every JSON document
(``to_json`` and ``--explain``'s data) compared byte for byte; prints both p50s and the
ratio. When REV's index schema is not this code's, REV's side reads a copy of the
repository (``bench/.cache/<repository>-schema-<N>``), so neither side rebuilds the
other's index.

Generated repositories are cached in bench/.cache/recall-v<version>-<n>-s<seed>/.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

BENCH = Path(__file__).resolve().parent
CACHE = BENCH / ".cache"
sys.path.insert(0, str(BENCH.parent))

from scarwarden import text  # noqa: E402
from scarwarden.files import playbook as pb  # noqa: E402
from scarwarden.index import open_index  # noqa: E402
from scarwarden.recall.engine import recall  # noqa: E402
from scarwarden.repo import MemoryRepo, open_repo  # noqa: E402

#: 1: every rule cites one episode; 2: rules cite a generated ledger (``--one-episode``: 1).
GEN_VERSION = 2
#: The clock per query: wall time, or with --cpu this process's CPU time (every engine
#: runs in-process on one thread, so CPU time is what each costs, whatever else runs).
CLOCK = time.perf_counter
VOCAB = 20_000
TAG_VOCAB = 2_000
_SYLLABLES = [
    c + v for c in "bdfgklmnprstvz" for v in ("a", "e", "i", "o", "u", "ar", "en", "il", "os", "um")
]


def vocabulary(rng: random.Random) -> list[str]:
    words: dict[str, None] = {}
    while len(words) < VOCAB:
        words["".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))] = None
    return list(words)


def zipf_weights(n: int) -> list[float]:
    # Offset ranks: real text after stopword removal is flatter than a pure Zipf law.
    return [1.0 / (rank + 50) for rank in range(n)]


def generate(n: int, seed: int, cited: bool = True) -> tuple[list[pb.Rule], list[str], list[dict]]:
    """The rules, the queries and (``cited``) the episodes the rules cite; the rules'
    words and the queries are the same whichever corpus."""
    rng = random.Random(seed)
    words = vocabulary(rng)
    weights = zipf_weights(VOCAB)
    cum = list(_accumulate(weights))
    tags = []
    for _ in range(TAG_VOCAB):
        parts = rng.sample(words[:5000], rng.choice((1, 1, 2)))
        tags.append("-".join(parts))
    tags = list(dict.fromkeys(tags))
    said = []
    for _ in range(n):
        body = rng.choices(words, cum_weights=cum, k=20)
        said.append((body, rng.sample(tags, rng.randint(3, 6))))
    episodes, cites = ledger(said, words, cum, seed) if cited else ([], [["ep-bench000001"]] * n)
    rules = [
        pb.make_rule(
            f"PB-{i:06d}",
            " ".join(body[:5]).capitalize(),
            " ".join(body[5:]).capitalize() + ".",
            rule_tags,
            cites[i - 1],
        )
        for i, (body, rule_tags) in enumerate(said, 1)
    ]
    queries = []
    for _ in range(300):
        rule = rules[rng.randrange(n)]
        own = rule.text.rstrip(".").lower().split()
        q = rng.sample(own, 3) + rule.tags[0].split("-")
        q += rng.choices(words, cum_weights=cum, k=8 - len(q))
        rng.shuffle(q)
        queries.append(" ".join(q))
    return rules, queries, episodes


def ledger(
    said: list[tuple[list[str], list[str]]], words: list[str], cum: list[float], seed: int
) -> tuple[list[dict], list[list[str]]]:
    """Episodes (one per 10 rules, at least 100), each from one rule: its task and
    correction say 3 and 2 of that rule's words among Zipf-drawn others; and each rule's
    citations: its own episodes first, then random ones, 1-2 for most rules, 3-10 for
    15%, 11-40 for 5%. A fifth of the episodes applied a rule (a third of those were
    corrected), so the struggling-rule check reads real applications."""
    rng = random.Random(seed + 7)
    n = len(said)
    count = max(100, n // 10)
    episodes, own = [], {}
    for j in range(count):
        r = rng.randrange(n)
        body = said[r][0]
        task = rng.sample(body, 3) + rng.choices(words, cum_weights=cum, k=6)
        fix = rng.sample(body, 2) + rng.choices(words, cum_weights=cum, k=10)
        rng.shuffle(task)
        rng.shuffle(fix)
        ep = {
            "id": f"ep-bench{j:07d}",
            "at": f"2026-{1 + j % 11:02d}-{1 + j % 28:02d}T{j % 24:02d}:00:00Z",
            "task": " ".join(task).capitalize(),
            "outcome": "Sent after review",
            "correction": " ".join(fix).capitalize() + ".",
            "tags": said[r][1][:2],
            "source": "correction",
        }
        if rng.random() < 0.2:
            ep["rules_applied"] = [f"PB-{r + 1:06d}"]
            if rng.random() > 1 / 3:
                del ep["correction"]
                ep["source"] = "outcome"
        episodes.append(ep)
        own.setdefault(r, []).append(ep["id"])
    cites = []
    for r in range(n):
        roll = rng.random()
        k = rng.randint(1, 2) if roll < 0.8 else rng.randint(3, 10) if roll < 0.95 else rng.randint(11, 40)
        mine = own.get(r, [])[:k]
        others = [episodes[rng.randrange(count)]["id"] for _ in range(k - len(mine))]
        cites.append(list(dict.fromkeys(mine + others)))
    return episodes, cites


def _accumulate(values: list[float]) -> list[float]:
    total, out = 0.0, []
    for v in values:
        total += v
        out.append(total)
    return out


def build(n: int, seed: int, cited: bool = True) -> tuple[MemoryRepo, list[pb.Rule], list[str], float]:
    """The cached repository for ``n`` rules (built through the library if missing)."""
    from scarwarden import git
    from scarwarden.files.episodes import render_episode
    from scarwarden.files.playbook_edit import save_playbook
    from scarwarden.files.record import add_episodes
    from scarwarden.files.scaffold import init

    rules, queries, episodes = generate(n, seed, cited)
    root = CACHE / f"recall-v{GEN_VERSION if cited else 1}-{n}-s{seed}"
    built = 0.0
    if not (root / ".git").exists():
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        env = dict(
            os.environ,
            GIT_AUTHOR_NAME="Bench",
            GIT_AUTHOR_EMAIL="bench@example.com",
            GIT_COMMITTER_NAME="Bench",
            GIT_COMMITTER_EMAIL="bench@example.com",
        )
        os.environ.update({k: v for k, v in env.items() if k.startswith("GIT_")})
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        subprocess.run(["git", "-C", str(root), "config", "commit.gpgsign", "false"], check=True)
        init(open_repo(root, initialised=False))
        repo = open_repo(root)
        if not episodes:
            add_episodes(
                repo,
                [
                    {
                        "id": "ep-bench000001",
                        "task": "Generate a benchmark playbook",
                        "outcome": "Rules generated",
                        "source": "import",
                    }
                ],
            )
        for ep in episodes:  # canonical files, one commit (add_episodes commits each call)
            path = repo.episodes_dir / ep["at"][:4] / ep["at"][5:7] / f"{ep['id']}.yaml"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(render_episode(ep), encoding="utf-8")
        save_playbook(repo, pb.Playbook(rules=tuple(rules)))
        paths = [repo.playbook_rel] + ([repo.episodes_rel] if episodes else [])
        git.add(root, paths)
        git.commit(root, f"playbook: {n} generated rules, {len(episodes)} episodes\n", only=paths)
    repo = open_repo(root)
    start = time.perf_counter()
    with open_index(repo) as index:
        if index.stats.mode == "rebuild" or index.stats.rules_changed:
            built = time.perf_counter() - start
    return repo, rules, queries, built


def warm(path: Path) -> None:
    """Read the index file once, start to end: a cached repository's index (1 GB at 100k
    rules) may have left the page cache since it was built, while the FTS5 table the
    run builds beside it is fresh in it. Read cold, ours paid the disk: 1.12x FTS5 at
    100k right after dropping the caches, 0.93x with them warm (session 11)."""
    with path.open("rb") as f:
        while f.read(1 << 22):
            pass


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))] * 1000


Runner = Callable[[str], object]


#: The clock's time spent in recall's first pass (finding the candidates: what the
#: lexical engines do), one entry per recall: the rest explains, routes and signs.
FIRST_PASS: list[float] = []
#: The clock's time spent scoring the candidates exactly (every contribution, the masses
#: behind the confidence), one entry per recall.
EXACT: list[float] = []


def ours(repo: MemoryRepo) -> tuple[Runner, Callable[[], None]]:
    """Recall on an open index (top 10), and how to close it; its first pass is timed
    into :data:`FIRST_PASS`, its exact scoring into :data:`EXACT`."""
    from scarwarden.recall import engine

    index = open_index(repo).__enter__()
    first, exact = engine.best_candidates, engine.score_rules

    def timed(*args: object, **kwargs: object) -> list[tuple[str, float]]:
        start = CLOCK()
        found = first(*args, **kwargs)  # type: ignore[arg-type]
        FIRST_PASS.append(CLOCK() - start)
        return found

    def scored(*args: object, **kwargs: object) -> object:
        start = CLOCK()
        out = exact(*args, **kwargs)  # type: ignore[arg-type]
        EXACT.append(CLOCK() - start)
        return out

    engine.best_candidates = timed  # type: ignore[assignment]
    engine.score_rules = scored  # type: ignore[assignment]

    def close() -> None:
        engine.best_candidates, engine.score_rules = first, exact
        index.__exit__(None, None, None)

    return (lambda q: recall(index, q, limit=10)), close


def rank_bm25(rules: list[pb.Rule]) -> tuple[Runner, float]:
    import numpy as np
    from rank_bm25 import BM25Okapi

    start = time.perf_counter()
    model = BM25Okapi([text.stems(r.title + "\n" + r.text) for r in rules])
    built = time.perf_counter() - start

    def run(q: str) -> object:
        scores = model.get_scores(text.stems(q))
        top = np.argpartition(-scores, 10)[:10]
        return sorted(top, key=lambda i: -scores[i])

    return run, built


def bm25s_engine(rules: list[pb.Rule]) -> tuple[Runner, float] | None:
    """bm25s (sparse matrices over numpy; ``pip install bm25s``), same stems, same
    K1/B, Lucene's idf like ours; ``retrieve`` top 10 one query at a time. None when
    bm25s is not installed."""
    try:
        import bm25s
    except ImportError:
        return None
    start = time.perf_counter()
    model = bm25s.BM25(k1=1.5, b=0.75)
    model.index([text.stems(r.title + "\n" + r.text) for r in rules], show_progress=False)
    built = time.perf_counter() - start
    return (lambda q: model.retrieve([text.stems(q)], k=10, show_progress=False, n_threads=1)), built


def fts5(rules: list[pb.Rule], path: Path) -> tuple[Runner, float, Callable[[], None]]:
    path.unlink(missing_ok=True)
    conn = sqlite3.connect(str(path))
    start = time.perf_counter()
    conn.execute(
        "CREATE VIRTUAL TABLE r USING fts5(id UNINDEXED, title, text, tokenize = 'porter unicode61')"
    )
    conn.executemany("INSERT INTO r VALUES (?, ?, ?)", [(x.id, x.title, x.text) for x in rules])
    conn.commit()
    built = time.perf_counter() - start
    sql = "SELECT id FROM r WHERE r MATCH ? ORDER BY bm25(r) LIMIT 10"

    def run(q: str) -> object:
        return conn.execute(sql, (" OR ".join(f'"{w}"' for w in text.tokens(q)),)).fetchall()

    def close() -> None:
        conn.close()
        path.unlink(missing_ok=True)

    return run, built, close


def interleaved(engines: dict[str, Runner], queries: list[str]) -> dict[str, list[float]]:
    """Each query through every engine (in ``engines``' order) before the next query."""
    out: dict[str, list[float]] = {name: [] for name in engines}
    for q in queries:
        for name, run in engines.items():
            start = CLOCK()
            run(q)
            out[name].append(CLOCK() - start)
    return out


BASELINES: dict[str, list[float]] = {}
#: CPU seconds (user + system, git's children included) of each cold process: steadier
#: than wall time on a busy machine, where a process start waits for a core.
CPU: dict[int, list[float]] = {}
CPU_OF: dict[str, list[float]] = {}
#: Instructions of one cold process each (:func:`instructions`; None: no valgrind).
INSTRUCTIONS: dict[str, int | None] = {}


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def plain_python() -> str:
    """An interpreter that starts as one with ``pip install .`` done does: a venv of its
    own (``bench/.cache/plain-venv``, made once) whose one ``.pth`` names this checkout and
    the running environment's site-packages as plain paths.

    The development environment's own interpreter is no fair baseline: an editable install
    (``pip install -e``) puts a finder in its ``site-packages`` that every start imports
    (pathlib, re, fnmatch...), 32 ms of CPU for ``python -c pass`` here against 15 ms in a
    venv with a regular install. Sessions 10-12 compared the cold recall with that 32 ms
    and read ~5.6x where a user's install is ~10x."""
    import site
    import venv

    root = CACHE / "plain-venv"
    python = root / "bin" / "python"
    if not python.exists():
        venv.EnvBuilder(with_pip=False, symlinks=True).create(root)
    paths = [str(BENCH.parent), *site.getsitepackages()]
    pth = next((root / "lib").glob("python3*/site-packages")) / "scarwarden-bench.pth"
    if not pth.exists() or pth.read_text() != "\n".join(paths) + "\n":
        pth.write_text("\n".join(paths) + "\n")
    return str(python)


def instructions(argv: list[str], env: dict[str, str]) -> int | None:
    """The instructions one process runs in user space, counted by valgrind's callgrind
    (None without valgrind): the same count on every run, whatever else the machine
    does, where CPU time moves with the load. Git's processes are not counted (nor are
    they in ``python -c pass``)."""
    if shutil.which("valgrind") is None:
        return None
    proc = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
        capture_output=True,
        text=True,
        env=env,
    )
    found = re.search(r"Collected : (\d+)", proc.stderr)
    return int(found.group(1)) if proc.returncode == 0 and found else None


def console_script(python: str) -> str:
    """The ``scarwarden`` script ``pip install`` writes into the plain venv's ``bin`` (the
    same lines pip's launcher has): what a user's ``scarwarden recall`` runs, with no
    ``runpy`` (``python -m`` imports it, and ``importlib.util``, before our first line)."""
    script = Path(python).parent / "scarwarden"
    text = (
        f"#!{python}\n# -*- coding: utf-8 -*-\nimport re\nimport sys\nfrom scarwarden.cli import main\n"
        "if __name__ == '__main__':\n"
        "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
        "    sys.exit(main())\n"
    )
    if not script.exists() or script.read_text() != text:
        script.write_text(text)
        script.chmod(0o755)
    return str(script)


def cold_cli(repo: MemoryRepo, queries: list[str], runs: int = 15) -> tuple[list[float], list[str]]:
    """Cold ``scarwarden recall`` processes, run as the console script, beside ``python -m
    scarwarden recall``, ``python -c pass`` and ``python -c 'import click'``."""
    python = plain_python()
    script = console_script(python)
    module = [python, "-m", "scarwarden"]
    # An installed package has its bytecode compiled; a checkout run with
    # PYTHONDONTWRITEBYTECODE=1 would recompile every module on every start (~70 ms
    # here), which measures the environment, not the command.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(CACHE / "pycache")
    subprocess.run(
        [script, "-C", str(repo.root), "recall", "--no-log", queries[0]],
        check=True,
        capture_output=True,
        env=env,
    )  # compile once
    times: list[float] = []
    dash_m: list[float] = []
    bare: list[float] = []
    click_only: list[float] = []
    for q in queries[:runs]:  # interleaved, so load on the machine hits all alike
        for sink, argv in (
            (times, [script, "-C", str(repo.root), "recall", "--no-log", q]),
            (dash_m, [*module, "-C", str(repo.root), "recall", "--no-log", q]),
            (bare, [python, "-c", "pass"]),
            (click_only, [python, "-c", "import click"]),
        ):
            before = _children_cpu()
            start = time.perf_counter()
            subprocess.run(argv, check=True, capture_output=True, env=env)
            sink.append(time.perf_counter() - start)
            CPU.setdefault(id(sink), []).append(_children_cpu() - before)
    CPU_OF["recall"], CPU_OF["python -c pass"] = CPU[id(times)], CPU[id(bare)]
    CPU_OF["python -m scarwarden recall"] = CPU[id(dash_m)]
    for name, argv in (
        ("recall", [python, script, "-C", str(repo.root), "recall", "--no-log", queries[0]]),
        ("python -m scarwarden recall", [*module, "-C", str(repo.root), "recall", "--no-log", queries[0]]),
        ("python -c pass", [python, "-c", "pass"]),
        ("python -c 'import click'", [python, "-c", "import click"]),
    ):
        INSTRUCTIONS[name] = instructions(argv, env)  # the script through its interpreter: the same
    BASELINES["python -m scarwarden recall"] = dash_m
    BASELINES["python -c pass"] = bare
    BASELINES["python -c 'import click'"] = click_only
    argv = ["scarwarden", "-C", str(repo.root), "recall", "--no-log", queries[0]]
    probe = (
        f"import sys, runpy; sys.argv = {argv!r}\n"
        "try:\n    runpy.run_module('scarwarden', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "print('MODULES', sorted(m for m in ('git', 'requests', 'flask', 'mcp', 'numpy', 'click') "
        "if m in sys.modules), file=sys.stderr)"
    )
    proc = subprocess.run([python, "-c", probe], capture_output=True, text=True, env=env)
    line = [x for x in proc.stderr.splitlines() if x.startswith("MODULES")]
    heavy = json.loads(line[0].split(" ", 1)[1].replace("'", '"')) if line else ["?"]
    return times, heavy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1k and 10k rules only")
    parser.add_argument("--sizes", nargs="*", help="rule counts (1000 10000, or 1000,10000)")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cpu", action="store_true", help="time queries in CPU time (a busy machine)")
    parser.add_argument(
        "--no-cache", action="store_true", help="recall keeping nothing between recalls (the citing rules)"
    )
    parser.add_argument(
        "--one-episode", action="store_true", help="the corpus where every rule cites one episode"
    )
    parser.add_argument(
        "--against", metavar="REV", help="this code beside REV's, task by task, JSON compared"
    )
    args = parser.parse_args()
    global CLOCK
    if args.cpu:
        CLOCK = time.process_time
    if args.no_cache:  # as a one-shot process is: it reads each episode's citing rules afresh
        from scarwarden.recall import citing

        citing.CITING.keep = False
    sizes = [int(x) for arg in args.sizes or () for x in arg.split(",") if x]
    sizes = sizes or ([1000, 10_000] if args.quick else [1000, 10_000, 100_000])
    unit = "cpu" if args.cpu else "wall"
    print(f"{'rules':>7} {'engine':<17}{'p50 ms':>9}{'p99 ms':>9}{'build s':>9}   ratio p50 ({unit} time)")
    for n in sizes:
        repo, rules, queries, built = build(n, args.seed, cited=not args.one_episode)
        queries = queries[: args.queries]
        if args.against:
            from recall_against import against

            against(repo, queries, args.against)
            continue
        run_ours, close_ours = ours(repo)
        warm(repo.index_path)  # in the page cache, as FTS5's table built below will be
        run_ours(queries[0])  # and one recall, like any open server
        engines: dict[str, Runner] = {"scarwarden": run_ours}
        builds = {"scarwarden": built}
        engines["rank_bm25"], builds["rank_bm25"] = rank_bm25(rules)
        run_fts, builds["fts5"], close_fts = fts5(rules, CACHE / f"fts-{n}-{os.getpid()}.db")
        engines["fts5"] = run_fts
        fast = bm25s_engine(rules)
        if fast is None:
            print(f"{n:>7} bm25s      not installed (pip install bm25s, or '.[bench]'): skipped")
        else:
            engines["bm25s"], builds["bm25s"] = fast
        FIRST_PASS.clear()
        EXACT.clear()
        times = interleaved(engines, queries)
        times["scarwarden 1st pass"] = FIRST_PASS[:]
        times["scarwarden exact"] = EXACT[:]
        times["scarwarden again"] = interleaved({"again": run_ours}, queries)["again"]
        close_fts()
        close_ours()
        base = pct(times["scarwarden"], 50)
        for name, values in times.items():
            ratio = "" if name == "scarwarden" else f"{pct(values, 50) / base:6.2f}x ours"
            b = builds.get(name, 0.0)
            build_s = f"{b:9.1f}" if b else "   cached"
            print(f"{n:>7} {name:<17}{pct(values, 50):9.2f}{pct(values, 99):9.2f}{build_s}   {ratio}")
        first = pct(times["scarwarden 1st pass"], 50)
        print(
            f"{'':>7} ours / fts5 {base / pct(times['fts5'], 50):.2f}x"
            + (f", ours / bm25s {base / pct(times['bm25s'], 50):.2f}x" if "bm25s" in times else "")
            + f"; first pass / fts5 {first / pct(times['fts5'], 50):.2f}x (load {os.getloadavg()[0]:.2f})"
        )
        exact = pct(times["scarwarden exact"], 50) / pct(times["fts5"], 50)
        print(
            f"{'':>7} exact scoring alone / fts5 {exact:.2f}x (the candidates' every contribution "
            "and confidence, in Python; the rest: evidence, route, receipt)"
        )
        if n == 1000:
            times, heavy = cold_cli(repo, queries)
            print(
                f"{n:>7} cold `scarwarden recall` process: median "
                f"{statistics.median(times) * 1000:.0f} ms, min {min(times) * 1000:.0f} ms "
                f"over {len(times)} runs; heavy modules imported: {heavy or 'none'}"
            )
            for name, values in BASELINES.items():
                print(
                    f"{'':>7} same run, {name}: median {statistics.median(values) * 1000:.0f} "
                    f"ms, min {min(values) * 1000:.0f} ms"
                )
            ours_cpu, bare_cpu = (statistics.median(CPU_OF[k]) for k in ("recall", "python -c pass"))
            wall = statistics.median(times) / statistics.median(BASELINES["python -c pass"])
            print(
                f"{'':>7} cold recall / python -c pass: {wall:.2f}x "
                f"wall, {ours_cpu / bare_cpu:.2f}x CPU ({ours_cpu * 1000:.0f} / {bare_cpu * 1000:.0f} ms, "
                f"load {os.getloadavg()[0]:.2f}; goal: within 6x; run as the console script pip writes)"
            )
            dash_m = statistics.median(CPU_OF["python -m scarwarden recall"])
            print(
                f"{'':>7} the same through python -m scarwarden (runpy first): {dash_m / bare_cpu:.2f}x CPU"
            )
            counts = {k: v for k, v in INSTRUCTIONS.items() if v}
            if len(counts) == len(INSTRUCTIONS):
                bare_ir = counts["python -c pass"]
                print(
                    f"{'':>7} instructions (callgrind, one process each, deterministic): "
                    + ", ".join(f"{k} {v / 1e6:.1f}M ({v / bare_ir:.2f}x)" for k, v in counts.items())
                )
            else:
                print(f"{'':>7} instructions: not counted (valgrind not found or failed)")


if __name__ == "__main__":
    main()
