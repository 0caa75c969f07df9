"""Distiller quality on real agent failures (issue 25): the replay stream and tau2-banking.

The replay stream is bench/replay.py's (tau-airline's 200 runs, one episode each, in
the default order or shuffled with ``--seed``), recorded in process (no recall sweeps:
this measures the playbook distillation writes, not recall), distilled offline every
``--distill-every`` runs. tau2-banking (``--banking``): its failed simulations' last
human turns are the corrections. At the end:

* **lessons present**: of each failed task, the first lesson (the first item of its
  first failure) in some active rule's text, by the replay judge (bench/replay_judge.py):
  ``specific`` (its values too) and ``general`` (the action and the argument);
* **episodes accounted for**: every episode with a correction is cited by an active
  rule, or was reported as left out with a reason (``distill --json``'s ``accounts``);
* **unsupported sentences**: sentences the support check (scarwarden.gate.support)
  finds sharing no content word with the episodes they name (errors and warnings);
* **contradictions** flagged and decided, and the share of the hand-labelled sample
  (bench/contradiction_sample.json) the detector gets wrong;
* **rules**, tokens per rule (characters / 4), the largest rule.

Examples:
    python bench/distill_replay.py                 # default order
    python bench/distill_replay.py --seed 1        # shuffled
    python bench/distill_replay.py --banking
    python bench/distill_replay.py --json
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from replay_data import episode_of, load_runs, stream_order  # noqa: E402
from replay_judge import analyse, held  # noqa: E402

from scarwarden import git  # noqa: E402
from scarwarden.distill import distill, state  # noqa: E402
from scarwarden.files import claims  # noqa: E402
from scarwarden.files.playbook_edit import load_playbook  # noqa: E402
from scarwarden.files.record import add_episodes  # noqa: E402
from scarwarden.files.scaffold import init  # noqa: E402

try:  # issue 25's modules; absent when this runs on an older checkout as a baseline
    from scarwarden.distill.lesson_text import lead, units
    from scarwarden.gate.support import unsupported
except ImportError:  # pragma: no cover - the baseline run
    lead = units = unsupported = None  # type: ignore[assignment]
from scarwarden.repo import MemoryRepo, open_repo  # noqa: E402

DATA = Path("/work/shared/datasets")
SAMPLE = BENCH / "contradiction_sample.json"
START = datetime(2026, 1, 5, 9, 0, 0)


def make_repo(parent: Path) -> MemoryRepo:
    path = parent / "memory-repo"
    path.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    for key, value in (("user.email", "bench@example.com"), ("user.name", "bench")):
        subprocess.run(["git", "-C", str(path), "config", key, value], check=True)
    init(open_repo(path, initialised=False))
    return open_repo(path)


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", " ".join(text.split())) if s]


def tokens(text: str) -> int:
    return -(-len(text) // 4)


def replay_stream(seed: int | None) -> tuple[list[dict[str, Any]], dict[int, Any]]:
    """The episodes in stream order, and each failed task's first lesson (an Item)."""
    runs = stream_order(load_runs(DATA / "tau-airline"), seed=seed)
    episodes, first = [], {}
    for index, run in enumerate(runs):
        at = (START + timedelta(minutes=index)).strftime("%Y-%m-%dT%H:%M:%SZ")
        episodes.append(episode_of(run, at))
        if run.items and run.task_id not in first:
            first[run.task_id] = run.items[0]
    return episodes, first


def banking_stream() -> list[dict[str, Any]]:
    """tau2-banking's tasks with an annotator's notes, in file order: the customer's
    scenario (its first sentence) is the task, the notes are the correction."""
    rows = [json.loads(line) for line in (DATA / "tau2-banking" / "tasks.jsonl").open(encoding="utf-8")]
    episodes = []
    for index, row in enumerate(r for r in rows if r.get("notes")):
        at = (START + timedelta(minutes=index)).strftime("%Y-%m-%dT%H:%M:%SZ")
        scenario = " ".join(str(row["instructions"]).split())
        episodes.append(
            {
                "at": at,
                "agent": "tau2-banking",
                "task": scenario[:300],
                "correction": row["notes"],
                "corrected_by": "tau2-banking annotator",
                "source": "correction",
                "x-task-id": row["id"],
            }
        )
    return episodes


def lessons_kept(repo: MemoryRepo, episodes: list[Any]) -> dict[str, int]:
    """Every correction sentence: in some active rule's text word for word, or restated
    (the same lesson: its episode named by a sentence of an active rule), or neither."""
    book = load_playbook(repo)
    text = " ".join(rule.text for rule in book.rules)
    named = {ep for rule in book.rules for said in rule.said() for ep in said.episode_ids}
    out = {"sentences": 0, "verbatim": 0, "restated": 0, "missing": 0}
    for ep in episodes:
        for unit in units(str(ep.get("correction") or "")):
            if not lead(unit).stems:
                continue
            out["sentences"] += 1
            key = "verbatim" if unit.text in text else "restated" if ep.id in named else "missing"
            out[key] += 1
    return out


def run(episodes: list[dict[str, Any]], every: int, parent: Path) -> dict[str, Any]:
    repo = make_repo(parent)
    accounts: dict[str, str] = {}
    flags = {"decided": 0, "unsure": 0}
    seconds = 0.0
    for start in range(0, len(episodes), every):
        add_episodes(repo, episodes[start : start + every])
        began = time.perf_counter()
        result = distill(repo, offline=True)
        seconds += time.perf_counter() - began
        for item in result.to_json().get("accounts", []):
            accounts[item["episode_id"]] = item["status"]  # the latest account wins
        for flag in result.contradictions:
            flags["decided" if flag.decided else "unsure"] += 1
    return {"repo": repo, "accounts": accounts, "flags": flags, "seconds": seconds}


def measure(repo: MemoryRepo, accounts: dict[str, str], first: dict[int, Any]) -> dict[str, Any]:
    book = load_playbook(repo)
    ledger = state.ledger_at(repo, git.head(repo.root) or "HEAD")
    eps = state.load_episodes(repo, ledger, sorted(ledger))[0]
    corrected = [ep for ep in eps if claims.clean(str(ep.get("correction") or ""))]
    active = {ep for rule in book.rules for ep in rule.episode_ids}
    cited = sum(ep.id in active for ep in corrected)
    left = sum(ep.id not in active and accounts.get(ep.id, "").startswith("left out") for ep in corrected)
    texts = [analyse(rule.text) for rule in book.rules]
    specific = sum(held(item, texts, "specific") for item in first.values())
    general = sum(held(item, texts, "general") for item in first.values())
    found = unsupported(book, {ep.id: ep for ep in eps}) if unsupported else []
    sizes = sorted(tokens(f"{rule.title} {rule.text}") for rule in book.rules)
    return {
        "episodes_with_correction": len(corrected),
        "cited_by_active_rule": cited,
        "left_out_with_reason": left,
        "unaccounted": len(corrected) - cited - left,
        "failed_tasks": len(first),
        "first_lessons_specific": specific,
        "first_lessons_general": general,
        "unsupported_errors": sum(1 for f in found if f.severity == "error"),
        "unsupported_warnings": sum(1 for f in found if f.severity == "warning"),
        "rules": len(book.rules),
        "retired": len(book.retired),
        "tokens_per_rule_median": sizes[len(sizes) // 2] if sizes else 0,
        "tokens_largest_rule": sizes[-1] if sizes else 0,
        "rules_over_150_tokens": sum(s > 150 for s in sizes),
        # ... of which hold more than one lesson (a sentence not starting "Context:")
        "rules_over_150_tokens_with_several_lessons": sum(
            tokens(f"{rule.title} {rule.text}") > 150
            and sum(not s.lower().startswith(("context:", "note:")) for s in _sentences(rule.text)) > 1
            for rule in book.rules
        ),
    }


def sample_errors() -> dict[str, Any]:
    """The contradiction detector against the hand-labelled pairs."""
    if not SAMPLE.exists() or units is None:
        return {}
    pairs = json.loads(SAMPLE.read_text(encoding="utf-8"))["pairs"]
    false_pos = [p for p in pairs if not p["contradicts"] and claims.contradiction(p["old"], p["new"])]
    missed = [p for p in pairs if p["contradicts"] and not claims.contradiction(p["old"], p["new"])]
    return {
        "pairs": len(pairs),
        "labelled_contradictions": sum(p["contradicts"] for p in pairs),
        "false_contradictions": len(false_pos),
        "missed_contradictions": len(missed),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench/distill_replay.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=None, help="shuffle the task order with this seed")
    parser.add_argument("--distill-every", type=int, default=10, metavar="N")
    parser.add_argument("--banking", action="store_true", help="tau2-banking's notes instead of the replay")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    episodes, first = (banking_stream(), {}) if args.banking else replay_stream(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        out = run(episodes, args.distill_every, Path(tmp))
        figures = measure(out["repo"], out["accounts"], first)
        ledger = state.ledger_at(out["repo"], git.head(out["repo"].root) or "HEAD")
        loaded = state.load_episodes(out["repo"], ledger, sorted(ledger))[0]
        if units is not None:
            kept = lessons_kept(out["repo"], loaded)
            figures.update({f"lesson_sentences_{k}": v for k, v in kept.items()})
    figures.update(
        {
            "stream": "tau2-banking notes"
            if args.banking
            else "replay, " + ("default order" if args.seed is None else f"seed {args.seed}"),
            "contradictions_decided": out["flags"]["decided"],
            "contradictions_flagged": out["flags"]["unsure"],
            "distill_seconds": round(out["seconds"], 2),
            **sample_errors(),
        }
    )
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for key, value in figures.items():
            print(f"{key:28} {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
