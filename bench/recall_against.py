"""``bench/recall.py --against REV``: recall through this checkout's code and REV's,
task by task, each in a process of its own, every JSON document compared byte for byte.

Recall must return the same JSON whatever path finds its candidates (issue 30 point 5):
this is the check over every task of the bench, and the same-run before/after figure.
Each process times its own recalls in CPU time; the two alternate task by task (and
which goes first alternates), so a change of load hits both alike.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

from scarwarden.repo import MemoryRepo

BENCH = Path(__file__).resolve().parent
CACHE = BENCH / ".cache"


#: A process that recalls each task read on stdin and answers with its CPU time and the
#: hash of its JSON (run with REV's package first on sys.path: ``--against``).
_WORKER = """
import hashlib, json, sys, time
sys.path.insert(0, sys.argv[1])
from scarwarden.index import open_index
from scarwarden.recall.engine import recall
from scarwarden.recall.explain import explain_data
from scarwarden.repo import open_repo
index = open_index(open_repo(sys.argv[2])).__enter__()
print(__import__("scarwarden").__file__, flush=True)
for line in sys.stdin:
    task = json.loads(line)
    start = time.process_time()
    result = recall(index, task, limit=10)
    spent = time.process_time() - start
    doc = json.dumps([result.to_json(), explain_data(result)], sort_keys=True)
    print(json.dumps([spent, hashlib.sha256(doc.encode()).hexdigest()]), flush=True)
"""


def package_at(rev: str) -> Path:
    """REV's ``scarwarden`` package, extracted once under the cache."""
    sha = subprocess.run(
        ["git", "-C", str(BENCH.parent), "rev-parse", "--verify", f"{rev}^{{commit}}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    root = CACHE / f"code-{sha[:12]}"
    if not (root / "scarwarden").is_dir():
        tmp = CACHE / f"code-{sha[:12]}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        archive = subprocess.run(
            ["git", "-C", str(BENCH.parent), "archive", sha, "scarwarden"], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
        tmp.rename(root)
    return root


def schema_of(package: Path) -> str:
    """The index schema version a ``scarwarden`` package builds."""
    source = (package / "scarwarden" / "index" / "schema.py").read_text()
    return source.split("SCHEMA_VERSION = ", 1)[1].split()[0]


def copy_for(repo: MemoryRepo, schema: str) -> Path:
    """A copy of the repository for code whose index schema is ``schema`` (its index is
    rebuilt there once, and kept), so two schemas never rebuild one index in turn."""
    root = CACHE / f"{repo.root.name}-schema-{schema}"
    if not (root / ".git").exists():
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(repo.root, root, symlinks=True, ignore=shutil.ignore_patterns("index.db*"))
    return root


def against(repo: MemoryRepo, queries: list[str], rev: str) -> None:
    """This code beside REV's, task by task in two processes; the JSON compared."""
    theirs = package_at(rev)
    schema = schema_of(theirs)
    sides = {
        "this": (BENCH.parent, repo.root),
        rev: (theirs, repo.root if schema == schema_of(BENCH.parent) else copy_for(repo, schema)),
    }
    procs = {
        name: subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(code), str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for name, (code, root) in sides.items()
    }
    for name, proc in procs.items():
        assert proc.stdout is not None
        print(f"{'':>7} {name}: {proc.stdout.readline().strip()}")
    spent: dict[str, list[float]] = {name: [] for name in procs}
    differ = 0
    loads = [os.getloadavg()[0]]
    for i, q in enumerate([queries[0], *queries]):  # the first task warms both
        hashes = {}
        for name in list(procs)[:: 1 if i % 2 else -1]:
            proc = procs[name]
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(json.dumps(q) + "\n")
            proc.stdin.flush()
            cpu, hashes[name] = json.loads(proc.stdout.readline())
            if i:
                spent[name].append(cpu)
        differ += i > 0 and len(set(hashes.values())) > 1
    loads.append(os.getloadavg()[0])
    for proc in procs.values():
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait()
    p50 = {name: statistics.median(values) * 1000 for name, values in spent.items()}
    print(
        f"{'':>7} against {rev}: this {p50['this']:.2f} ms, "
        f"{rev} {p50[rev]:.2f} ms CPU p50, this / {rev} {p50['this'] / p50[rev]:.2f}x; "
        f"JSON differs on {differ} of {len(queries)} tasks (load {loads[0]:.1f}-{loads[1]:.1f})"
    )
