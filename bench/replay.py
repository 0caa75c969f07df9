"""The replay benchmark (issue 14): the honest curve of memory helping, on real agent failures.

Replays tau-airline's 200 recorded GPT-4o runs (50 tasks x 4 trials: trial 0 of every
task, then trial 1, ...) into a fresh Scarwarden memory repository, through the CLI
only: one `episode add` per run (the failure's correction derived from the ground
truth), `distill` every N runs, and `recall` before every run and, at every checkpoint,
for every task. Beside it, in the same run and judged by the same code: no memory, raw
episodes by BM25 (no playbook) and the airline policy split into rules (no experience).
Method, judge and figures: docs/replay.md (written by this script).

Examples:
    python bench/replay.py                        # the full replay; rewrites docs/replay.md
    python bench/replay.py --seed 1               # shuffled task order (order effects)
    python bench/replay.py --tasks 6 --trials 2 --no-chart --json     # a quick slice
    python bench/replay.py --distill-every 25 --checkpoint-every 25
    python bench/replay.py --render               # re-render docs/replay.md from docs/replay/*.json
    python bench/replay.py --tasks 25 --case-weight 0 --json   # the case weight's fit (docs/recall.md)
    SCARWARDEN_API_KEY=... python bench/replay.py --model --answer    # with a model
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from replay_data import Run, correction_text, load_runs, stream_order  # noqa: E402
from replay_figures import figures  # noqa: E402
from replay_memory import NoScarwarden, PolicyRules, Scarwarden, bench_env  # noqa: E402
from replay_stream import Options, replay  # noqa: E402

ROOT = BENCH.parent
#: Beside the checkout, as in CI; REPLAY_DATA points elsewhere (a worktree).
DATA = Path(os.environ.get("REPLAY_DATA") or ROOT.parent / "shared" / "datasets" / "tau-airline")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="bench/replay.py",
        description=__doc__.split("\n\n")[0],
        epilog="\n".join(__doc__.split("\n\n")[2:]),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--data", type=Path, default=DATA, help="the tau-airline folder (default: %(default)s)"
    )
    parser.add_argument("--seed", type=int, default=None, help="shuffle the task order with this seed")
    parser.add_argument("--tasks", type=int, default=None, help="only the first N tasks (a slice)")
    parser.add_argument("--trials", type=int, default=None, help="only the first N trials of each task")
    parser.add_argument("--distill-every", type=int, default=10, metavar="N", help="distil every N runs (10)")
    parser.add_argument(
        "--checkpoint-every", type=int, default=10, metavar="N", help="sweep every task every N runs (10)"
    )
    parser.add_argument("--top", type=int, default=3, help="items recalled per task, every system (3)")
    parser.add_argument("--jobs", type=int, default=2, help="parallel recall processes in a sweep (2)")
    parser.add_argument(
        "--tags",
        choices=("actions", "topics"),
        default="actions",
        help="episode tags: the writes and arguments at fault (default), or also the"
        " instruction's topic words (the first design)",
    )
    parser.add_argument("--model", action="store_true", help="distil with the model (needs a key)")
    parser.add_argument(
        "--answer",
        action="store_true",
        help="re-answer each repeated failure with memory on and off (needs a key)",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON on stdout")
    parser.add_argument("--no-chart", action="store_true", help="do not draw the chart")
    parser.add_argument(
        "--docs",
        type=Path,
        default=None,
        help="write docs/replay.md and docs/replay/ here (default: the repository's docs/"
        " for a full run, nothing for a slice)",
    )
    parser.add_argument("--no-docs", action="store_true", help="write no docs, even for a full run")
    parser.add_argument(
        "--render",
        action="store_true",
        help="only re-render docs/replay.md from the stored figures (no replay)",
    )
    parser.add_argument(
        "--case-weight",
        type=float,
        default=None,
        metavar="W",
        help="recall version 6's same-case weight in the CLI processes (bench only: the fit on"
        " tasks 0-24; a run with it writes docs only where --docs says)",
    )
    parser.add_argument("--keep", type=Path, default=None, help="keep the memory repository in this folder")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.add_argument(
        "--baselines-only",
        action="store_true",
        help="measure the baselines alone (no Scarwarden, no CLI call; seconds): print JSON, write no docs",
    )
    return parser.parse_args(argv)


def run(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """The replay in ``workdir``; returns the figures."""
    stream = stream_order(load_runs(args.data), seed=args.seed, tasks=args.tasks, trials=args.trials)
    policy = PolicyRules((args.data / "policy.md").read_text("utf-8"))
    env = bench_env(offline=not (args.model or args.answer))
    if args.case_weight is not None:
        env = with_case_weight(env, args.case_weight, workdir)
    sw: Any = NoScarwarden() if args.baselines_only else Scarwarden(workdir / "memory", env)
    sw.init()
    opts = Options(
        distill_every=args.distill_every,
        checkpoint_every=args.checkpoint_every,
        top=args.top,
        jobs=args.jobs,
        model=args.model,
        progress=not args.quiet,
        topic_tags=args.tags == "topics",
        seed=args.seed,
    )
    on_event = None
    answers: list[dict[str, Any]] = []
    if args.answer:
        from replay_answer import Answerer

        on_event = Answerer(sw, answers, progress=opts.progress).on_event
    result = replay(stream, sw, policy, opts, on_event)
    if args.answer:
        from replay_answer import summarise_answers

        result["answers"] = summarise_answers(answers)
    meta = {
        "seed": args.seed,
        "tasks": len({r.task_id for r in stream}),
        "runs": len(stream),
        "distill_every": args.distill_every,
        "checkpoint_every": args.checkpoint_every,
        "top": args.top,
        "tags": args.tags,
        "distiller": "model" if args.model else "offline",
        "block": len({r.task_id for r in stream}),
        "command": command_line(args),
        "unexplained": sum(1 for r in stream if r.failed and not r.items),
        "policy_rules": len(policy.texts),
        "example": example(stream),
        "load_average": [round(x, 1) for x in os.getloadavg()],
    }
    if args.case_weight is not None:
        meta["case_weight"] = args.case_weight
    return figures(result, meta)


#: Imported by every Python process started with the returned environment, before the CLI:
#: it sets recall's same-case weight, a module constant read when a rule is scored.
_CASE_WEIGHT_SITE = """from scarwarden.recall import formulas

formulas.CASE_WEIGHT = {weight!r}
"""


def with_case_weight(env: dict[str, str], weight: float, workdir: Path) -> dict[str, str]:
    """``env`` with a ``sitecustomize`` that sets ``formulas.CASE_WEIGHT`` to ``weight`` in
    the Scarwarden CLI processes (the product has no such setting: the weight is part of
    recall algorithm version 6, which receipts name)."""
    site = workdir / "case-weight-site"
    site.mkdir(parents=True, exist_ok=True)
    (site / "sitecustomize.py").write_text(_CASE_WEIGHT_SITE.format(weight=weight), "utf-8")
    path = [str(site), env.get("PYTHONPATH", "")]
    return {**env, "PYTHONPATH": os.pathsep.join(p for p in path if p)}


def example(stream: list[Run]) -> dict[str, Any]:
    """A correction to quote in the docs: the first refusal of the stream, else the first correction."""
    failed = [r for r in stream if r.items]
    run = next((r for r in failed if r.items[0].kind == "refuse"), failed[0] if failed else None)
    if run is None:
        return {"task": None, "trial": None, "text": ""}
    return {"task": run.task_id, "trial": run.trial, "text": correction_text(run)}


def command_line(args: argparse.Namespace) -> str:
    """The command that regenerates these figures."""
    parts = ["python bench/replay.py"]
    for flag, value, default in (
        ("--seed", args.seed, None),
        ("--tasks", args.tasks, None),
        ("--trials", args.trials, None),
        ("--distill-every", args.distill_every, 10),
        ("--checkpoint-every", args.checkpoint_every, 10),
        ("--top", args.top, 3),
        ("--tags", args.tags, "actions"),
        ("--case-weight", args.case_weight, None),
    ):
        if value != default:
            parts.append(f"{flag} {value}")
    parts += [flag for flag, on in (("--model", args.model), ("--answer", args.answer)) if on]
    return " ".join(parts)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.render:
        from replay_report import render_stored

        render_stored(args.docs or ROOT / "docs")
        return 0
    missing = [name for name in ("gpt-4o-airline.json", "policy.md") if not (args.data / name).is_file()]
    if missing:
        print(
            f"replay: no {' or '.join(missing)} in {args.data}: give the tau-airline folder with --data "
            "(or REPLAY_DATA); it is ../shared/datasets/tau-airline beside the checkout",
            file=sys.stderr,
        )
        return 2
    with tempfile.TemporaryDirectory(prefix="replay-") as tmp:
        workdir = args.keep or Path(tmp)
        figs = run(args, workdir)
    docs = args.docs
    if args.baselines_only:
        print(json.dumps(figs, indent=1))
        return 0
    full = args.tasks is None and args.trials is None and args.case_weight is None
    if docs is None and full and not args.no_docs:
        docs = ROOT / "docs"
    if docs is not None:
        from replay_report import write_docs

        write_docs(figs, docs, chart=not args.no_chart)
    if args.json:
        print(json.dumps(figs, indent=1))
    else:
        from replay_report import summary_lines

        print("\n".join(summary_lines(figs)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
