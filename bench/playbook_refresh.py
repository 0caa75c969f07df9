"""Playbook refresh: what `scarwarden index` costs after one rule of a big playbook changed.

The index keeps a digest of each rule's section of ``memory/playbook.md`` and parses only
the sections whose digest moved (``files/playbook_parse.parse_changed``). This measures
it on the generated playbooks of ``bench/recall.py`` (1k, 10k and 100k rules, cached in
``bench/.cache``; built there first if missing), in place: each round edits one word of a
rule in the middle of the file, times ``scarwarden index`` as a process (CPU: user +
system of the child, steadier than wall time on a busy machine, and wall), then puts
the file back and refreshes again. Beside it, in the same run and on the same file:

* ``nothing changed``: ``scarwarden index`` again with no edit (the floor: start-up,
  the git and folder checks);
* ``parse()``: the whole file parsed in this process, what every refresh after an edit
  paid before (its CPU time);
* ``parse_changed()``: the same file after the edit, only the edited section parsed.

    python bench/playbook_refresh.py                   # 1k, 10k, 100k rules
    python bench/playbook_refresh.py --sizes 10000 --runs 5
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent))

import recall as recall_bench  # noqa: E402

from scarwarden.files import playbook as pb  # noqa: E402
from scarwarden.index.scan import RACY_NS  # noqa: E402


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _index(root: Path) -> tuple[float, float, str]:
    """(CPU s, wall s, what it printed) of one `scarwarden index` process."""
    cpu, wall = _child_cpu(), time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "scarwarden", "-C", str(root), "index"],
        capture_output=True,
        text=True,
        check=True,
        env=dict(os.environ, PYTHONPATH=str(BENCH.parent)),
    ).stdout.strip()
    return _child_cpu() - cpu, time.perf_counter() - wall, out


def _edited(text: str, word: str) -> str:
    """``text`` with ``word`` put into the first line of text of the middle rule."""
    middle = text.index("\n## PB-", len(text) // 2)
    start = text.index("\n\n", middle) + 2
    return text[:start] + word + " " + text[start:]


def _settle() -> None:
    """A file written within :data:`~scarwarden.index.scan.RACY_NS` (2 s) of a refresh is
    read again by the next ('racy', as git's index treats it): wait it out, so each timing
    is of one refresh."""
    time.sleep(RACY_NS / 1e9 + 0.1)


def measure(n: int, runs: int) -> dict[str, list[float]]:
    repo, _rules, _queries, _built = recall_bench.build(n, 1)
    path = repo.playbook_path
    original = path.read_text(encoding="utf-8")
    out: dict[str, list[float]] = {k: [] for k in ("edit", "edit wall", "nothing", "parse", "parse_changed")}
    known = {s.rule_id: s.digest for s in pb.parse_changed(original, {})}
    _settle()
    _index(repo.root)  # in step with the file
    try:
        for run in range(runs):
            edited = _edited(original, f"benchword{run}")
            path.write_text(edited, encoding="utf-8")
            _settle()
            cpu, wall, said = _index(repo.root)
            if "1 rule(s) changed" not in said:
                raise SystemExit(f"expected one rule changed, got: {said}")
            out["edit"].append(cpu)
            out["edit wall"].append(wall)
            _settle()
            out["nothing"].append(_index(repo.root)[0])
            start = time.process_time()
            pb.parse(edited)
            out["parse"].append(time.process_time() - start)
            start = time.process_time()
            changed = pb.parse_changed(edited, known)
            out["parse_changed"].append(time.process_time() - start)
            assert sum(1 for s in changed if s.rule is not None) == 1
            path.write_text(original, encoding="utf-8")
            _settle()
            _index(repo.root)
    finally:
        path.write_text(original, encoding="utf-8")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="rule counts, comma-separated")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    heads = ("index after one edit", "nothing changed", "parse()", "parse_changed()")
    print(f"{'rules':>7} {heads[0]:>22} {heads[1]:>16} {heads[2]:>9} {heads[3]:>16}")
    print(f"{'':>7} {'CPU s (wall s)':>22} {'CPU s':>16} {'CPU s':>9} {'CPU s':>16}   medians of {args.runs}")
    for n in (int(x) for x in args.sizes.split(",") if x):
        m = {k: statistics.median(v) for k, v in measure(n, args.runs).items()}
        print(
            f"{n:>7} {m['edit']:>13.3f} ({m['edit wall']:.3f}) {m['nothing']:>16.3f} {m['parse']:>9.3f} "
            f"{m['parse_changed']:>16.3f}   edit / nothing {m['edit'] / m['nothing']:.2f}x, "
            f"parse_changed / parse {m['parse_changed'] / m['parse']:.2f}x (load {os.getloadavg()[0]:.2f})"
        )


if __name__ == "__main__":
    main()
