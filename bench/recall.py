"""Recall speed: Scarwarden's recall beside rank_bm25 and SQLite FTS5, same rules, same run.

Generated playbooks of 1k, 10k and 100k rules (about 20 words and 3-6 tags each, words
drawn from a 20,000-word vocabulary with a Zipf-like spread), written as a real
``memory/playbook.md`` in a temporary git repository and indexed through the library
(``open_index``), every rule citing one real episode. 300 queries of about 8 words
(some words and a tag of one rule, the rest random), timed in-process:

* ``scarwarden``: :func:`scarwarden.recall.engine.recall` on the open index (top 10);
* ``rank_bm25``: ``BM25Okapi.get_scores`` over the same stemmed tokens, then the top 10;
* ``fts5``: an FTS5 table of the same titles and texts (porter tokenizer),
  ``ORDER BY bm25(...) LIMIT 10`` with the query words OR-ed;
* ``bm25s``: ``bm25s.BM25`` over the same stemmed tokens, ``retrieve`` top 10 (skipped,
  with a line saying so, when bm25s is not installed: ``pip install '.[bench]'``).

Ours is timed first (``scarwarden``: one process meeting these tasks for the first
time, the postings cache of recall/postings_cache.py filling as common words come back)
and again last (``scarwarden again``: the same tasks a second time; the two runs bracket
the others, so a change of load on the machine shows). Ratios are against the first.

Then the wall time of a cold ``scarwarden recall "..."`` process at 1k rules, and which
heavy modules that process imported (GitPython and requests must not be among them).

    python bench/recall.py              # 1k, 10k, 100k
    python bench/recall.py --quick      # 1k, 10k
    python bench/recall.py --sizes 10000 --queries 100
    python bench/recall.py --cpu        # per-query CPU time: steadier when the machine is busy
    python bench/recall.py --no-cache   # without recall's in-memory postings cache

Generated repositories are cached in bench/.cache/recall-<n>-s<seed>/.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
CACHE = BENCH / ".cache"
sys.path.insert(0, str(BENCH.parent))

from scarwarden import text  # noqa: E402
from scarwarden.files import playbook as pb  # noqa: E402
from scarwarden.index import open_index  # noqa: E402
from scarwarden.recall.engine import recall  # noqa: E402
from scarwarden.repo import MemoryRepo, open_repo  # noqa: E402

GEN_VERSION = 1
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


def generate(n: int, seed: int) -> tuple[list[pb.Rule], list[str]]:
    rng = random.Random(seed)
    words = vocabulary(rng)
    weights = zipf_weights(VOCAB)
    cum = list(_accumulate(weights))
    tags = []
    for _ in range(TAG_VOCAB):
        parts = rng.sample(words[:5000], rng.choice((1, 1, 2)))
        tags.append("-".join(parts))
    tags = list(dict.fromkeys(tags))
    rules = []
    for i in range(1, n + 1):
        body = rng.choices(words, cum_weights=cum, k=20)
        rule_tags = rng.sample(tags, rng.randint(3, 6))
        rules.append(
            pb.make_rule(
                f"PB-{i:06d}",
                " ".join(body[:5]).capitalize(),
                " ".join(body[5:]).capitalize() + ".",
                rule_tags,
                ["ep-bench000001"],
            )
        )
    queries = []
    for _ in range(300):
        rule = rules[rng.randrange(n)]
        own = rule.text.rstrip(".").lower().split()
        q = rng.sample(own, 3) + rule.tags[0].split("-")
        q += rng.choices(words, cum_weights=cum, k=8 - len(q))
        rng.shuffle(q)
        queries.append(" ".join(q))
    return rules, queries


def _accumulate(values: list[float]) -> list[float]:
    total, out = 0.0, []
    for v in values:
        total += v
        out.append(total)
    return out


def build(n: int, seed: int) -> tuple[MemoryRepo, list[pb.Rule], list[str], float]:
    """The cached repository for ``n`` rules (built through the library if missing)."""
    from scarwarden import git
    from scarwarden.files.playbook_edit import save_playbook
    from scarwarden.files.record import add_episodes
    from scarwarden.files.scaffold import init

    rules, queries = generate(n, seed)
    root = CACHE / f"recall-v{GEN_VERSION}-{n}-s{seed}"
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
        save_playbook(repo, pb.Playbook(rules=tuple(rules)))
        git.add(root, [repo.playbook_rel])
        git.commit(root, f"playbook: {n} generated rules\n", only=[repo.playbook_rel])
    repo = open_repo(root)
    start = time.perf_counter()
    with open_index(repo) as index:
        if index.stats.mode == "rebuild" or index.stats.rules_changed:
            built = time.perf_counter() - start
    return repo, rules, queries, built


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))] * 1000


def time_ours(repo: MemoryRepo, queries: list[str]) -> list[float]:
    out = []
    with open_index(repo) as index:
        recall(index, queries[0], limit=10)  # warm the page cache like any open server
        for q in queries:
            start = CLOCK()
            recall(index, q, limit=10)
            out.append(CLOCK() - start)
    return out


def time_rank_bm25(rules: list[pb.Rule], queries: list[str]) -> tuple[list[float], float]:
    import numpy as np
    from rank_bm25 import BM25Okapi

    start = time.perf_counter()
    model = BM25Okapi([text.stems(r.title + "\n" + r.text) for r in rules])
    built = time.perf_counter() - start
    out = []
    for q in queries:
        start = CLOCK()
        scores = model.get_scores(text.stems(q))
        top = np.argpartition(-scores, 10)[:10]
        sorted(top, key=lambda i: -scores[i])
        out.append(CLOCK() - start)
    return out, built


def time_bm25s(rules: list[pb.Rule], queries: list[str]) -> tuple[list[float], float] | None:
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
    out = []
    for q in queries:
        start = CLOCK()
        model.retrieve([text.stems(q)], k=10, show_progress=False, n_threads=1)
        out.append(CLOCK() - start)
    return out, built


def time_fts5(rules: list[pb.Rule], queries: list[str], path: Path) -> tuple[list[float], float]:
    path.unlink(missing_ok=True)
    conn = sqlite3.connect(str(path))
    start = time.perf_counter()
    conn.execute(
        "CREATE VIRTUAL TABLE r USING fts5(id UNINDEXED, title, text, tokenize = 'porter unicode61')"
    )
    conn.executemany("INSERT INTO r VALUES (?, ?, ?)", [(x.id, x.title, x.text) for x in rules])
    conn.commit()
    built = time.perf_counter() - start
    out = []
    for q in queries:
        match = " OR ".join(f'"{w}"' for w in text.tokens(q))
        start = CLOCK()
        conn.execute("SELECT id FROM r WHERE r MATCH ? ORDER BY bm25(r) LIMIT 10", (match,)).fetchall()
        out.append(CLOCK() - start)
    conn.close()
    path.unlink(missing_ok=True)
    return out, built


BASELINES: dict[str, list[float]] = {}


def cold_cli(repo: MemoryRepo, queries: list[str], runs: int = 15) -> tuple[list[float], list[str]]:
    exe = shutil.which("scarwarden")
    cmd = [exe] if exe else [sys.executable, "-m", "scarwarden"]
    # An installed package has its bytecode compiled; a checkout run with
    # PYTHONDONTWRITEBYTECODE=1 would recompile every module on every start (~70 ms
    # here), which measures the environment, not the command.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(CACHE / "pycache")
    subprocess.run(
        [*cmd, "-C", str(repo.root), "recall", "--no-log", queries[0]],
        check=True,
        capture_output=True,
        env=env,
    )  # compile once
    times: list[float] = []
    bare: list[float] = []
    click_only: list[float] = []
    for q in queries[:runs]:  # interleaved, so load on the machine hits all three alike
        for sink, argv in (
            (times, [*cmd, "-C", str(repo.root), "recall", "--no-log", q]),
            (bare, [sys.executable, "-c", "pass"]),
            (click_only, [sys.executable, "-c", "import click"]),
        ):
            start = time.perf_counter()
            subprocess.run(argv, check=True, capture_output=True, env=env)
            sink.append(time.perf_counter() - start)
    BASELINES["python -c pass"] = bare
    BASELINES["python -c 'import click'"] = click_only
    argv = ["scarwarden", "-C", str(repo.root), "recall", "--no-log", queries[0]]
    probe = (
        f"import sys, runpy; sys.argv = {argv!r}\n"
        "try:\n    runpy.run_module('scarwarden', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "print('MODULES', sorted(m for m in ('git', 'requests', 'flask', 'mcp', 'numpy') "
        "if m in sys.modules), file=sys.stderr)"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env)
    line = [x for x in proc.stderr.splitlines() if x.startswith("MODULES")]
    heavy = json.loads(line[0].split(" ", 1)[1].replace("'", '"')) if line else ["?"]
    return times, heavy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1k and 10k rules only")
    parser.add_argument("--sizes", type=int, nargs="*", help="rule counts")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cpu", action="store_true", help="time queries in CPU time (a busy machine)")
    parser.add_argument("--no-cache", action="store_true", help="recall without the in-memory postings cache")
    args = parser.parse_args()
    global CLOCK
    if args.cpu:
        CLOCK = time.process_time
    if args.no_cache:  # as a one-shot process is: it never meets a stem twice
        from scarwarden.recall import postings_cache

        postings_cache.CACHE.min_cached = sys.maxsize
    sizes = args.sizes or ([1000, 10_000] if args.quick else [1000, 10_000, 100_000])
    unit = "cpu" if args.cpu else "wall"
    print(f"{'rules':>7} {'engine':<17}{'p50 ms':>9}{'p99 ms':>9}{'build s':>9}   ratio p50 ({unit} time)")
    for n in sizes:
        repo, rules, queries, built = build(n, args.seed)
        queries = queries[: args.queries]
        ours = time_ours(repo, queries)
        bm25, bm25_built = time_rank_bm25(rules, queries)
        fts, fts_built = time_fts5(rules, queries, CACHE / f"fts-{n}.db")
        fast = time_bm25s(rules, queries)
        again = time_ours(repo, queries)
        base = pct(ours, 50)
        engines = [("scarwarden", ours, built), ("rank_bm25", bm25, bm25_built), ("fts5", fts, fts_built)]
        if fast is None:
            print(f"{n:>7} bm25s      not installed (pip install bm25s): skipped")
        else:
            engines.append(("bm25s", *fast))
        engines.append(("scarwarden again", again, 0.0))
        for name, values, b in engines:
            ratio = "" if name == "scarwarden" else f"{pct(values, 50) / base:6.2f}x ours"
            build_s = f"{b:9.1f}" if b else "   cached"
            print(f"{n:>7} {name:<17}{pct(values, 50):9.2f}{pct(values, 99):9.2f}{build_s}   {ratio}")
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


if __name__ == "__main__":
    main()
