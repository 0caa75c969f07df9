"""Asked once, known after: the learning loop, and the router on memories of every size.

Two measurements, each in one run:

learning loop (``bench/learning_tasks.yaml``: 30 tasks in three domains unrelated to the
demo, each with a human's answer and a rewording, labelled before the first run)
    A memory starts as the bundled demo memory (15 rules about marketing, support,
    billing and images). Every task is recalled (it should be ``ASK_HUMAN``), the human's answer is
    recorded through :func:`scarwarden.answers.asking.record_human_answer`, then
    ``scarwarden distill`` runs once (offline distiller, committed). Each task is then
    recalled again in its own words and reworded. *Known* = the verdict is ``ACT`` or
    ``ACT_AND_FLAG`` and the first rule cites the episode that recorded the answer.

router confusion matrix (``--router``)
    Memories of 3, 30 and 300 rules: the demo memory's first 3 rules; its 15 rules and
    15 tau2-banking policy documents; its 15 rules and 285 documents. Tasks: the 66
    labelled tasks of ``bench/recall_tasks.yaml`` (the expected rule where the memory
    has it, else none), the 50 airline tasks of tau-airline (none), and this bench's 30
    tasks and rewordings (none: the memory never saw them). Rows: the expected outcome
    (a rule of the memory, or none); columns: the verdict; and the count that matters
    most, ``ACT`` on a wrong rule (or on a task the memory knows nothing about).
    Then the coverage rule's threshold (``router.ACT_RULE_COVERAGE``) held out: the
    distinct tasks are split alternately into two halves, the threshold is fitted on
    one (in the gap between wrong and right ACTs, as 0.1 was) and the matrix's counts
    are reported on the other, beside the default and no rule at all; then swapped.

    python bench/recall_learning.py
    python bench/recall_learning.py --router
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))

from recall_quality import DATASETS, doc_tags, flatten, temp_repo  # noqa: E402

from scarwarden.answers.asking import record_human_answer  # noqa: E402
from scarwarden.config import RecallSettings  # noqa: E402
from scarwarden.distill import distill  # noqa: E402
from scarwarden.files import playbook as pb  # noqa: E402
from scarwarden.files.scaffold import init  # noqa: E402
from scarwarden.index import open_index  # noqa: E402
from scarwarden.recall import router  # noqa: E402
from scarwarden.recall.engine import recall, recall_task  # noqa: E402
from scarwarden.repo import MemoryRepo, open_repo  # noqa: E402

VERDICTS = (router.ACT, router.ACT_AND_FLAG, router.ASK_HUMAN)


def items() -> list[dict[str, str]]:
    data = yaml.safe_load((BENCH / "learning_tasks.yaml").read_text())
    return [{**item, "domain": domain} for domain, rows in data["domains"].items() for item in rows]


def demo_memory(parent: Path) -> MemoryRepo:
    root = temp_repo(parent)
    init(open_repo(root, initialised=False), demo=True)
    return open_repo(root)


def known(res: Any, episode_id: str) -> bool:
    return res.verdict != router.ASK_HUMAN and bool(res.rules) and episode_id in res.rules[0].episode_ids


def learning(args: argparse.Namespace) -> None:
    tasks = items()
    domains = Counter(t["domain"] for t in tasks)
    print(f"Learning loop: {len(tasks)} tasks ({', '.join(f'{n} {d}' for d, n in domains.items())})")
    with tempfile.TemporaryDirectory() as tmp:
        repo = demo_memory(Path(tmp))
        before = Counter(recall_task(repo, t["task"], log=False).verdict for t in tasks)
        reworded_before = Counter(recall_task(repo, t["reworded"], log=False).verdict for t in tasks)
        episodes = {}
        for t in tasks:
            episodes[t["task"]] = record_human_answer(repo, t["task"], t["answer"]).id
        result = distill(repo, offline=True)
        print(f"distill (offline): {result.to_json().get('subject')}")
        rows: dict[str, list[tuple[str, bool, Any]]] = {"same words": [], "other words": []}
        for t in tasks:
            for kind, words in (("same words", t["task"]), ("other words", t["reworded"])):
                res = recall_task(repo, words, log=False)
                rows[kind].append((t["domain"], known(res, episodes[t["task"]]), res))
    print(f"\nBefore any answer: {dict(before)} (same words), {dict(reworded_before)} (reworded)")
    for kind, got in rows.items():
        ok = sum(k for _, k, _ in got)
        verdicts = Counter(res.verdict for _, _, res in got)
        by_domain = ", ".join(f"{d} {sum(k for dd, k, _ in got if dd == d)}/{n}" for d, n in domains.items())
        print(
            f"After one answer and distill, {kind}: known {ok}/{len(got)} = {ok / len(got):.0%} "
            f"({by_domain}); verdicts {dict(verdicts)}"
        )
        for domain, k, res in got:
            if not k:
                first = res.rules[0].id if res.rules else "-"
                print(f"    missed ({domain}): {res.task!r} -> {res.verdict} {first}")


# -- router confusion matrix ------------------------------------------------------------


def banking_rules(count: int, start: int) -> list[pb.Rule]:
    docs = [json.loads(x) for x in (DATASETS / "tau2-banking" / "documents.jsonl").read_text().splitlines()]
    return [
        pb.make_rule(
            f"PB-{start + i:03d}", d["title"], flatten(d["content"]), doc_tags(d["id"]), ["ep-bench-import"]
        )
        for i, d in enumerate(docs[:count])
    ]


def sized_memory(parent: Path, size: int) -> MemoryRepo:
    """The demo memory cut to ``size`` rules (3), or padded with banking documents."""
    from scarwarden import git
    from scarwarden.files.playbook_edit import save_playbook
    from scarwarden.files.record import add_episodes

    repo = demo_memory(parent)
    book = pb.parse(repo.playbook_path.read_text())
    rules = book.rules[:size]
    if size > len(book.rules):
        add_episodes(
            repo,
            [
                {
                    "id": "ep-bench-import",
                    "at": "2026-11-01T00:00:00Z",
                    "task": "Import policies",
                    "outcome": "ok",
                }
            ],
            source="bench",
            message="episodes: import\n",
        )
        rules = book.rules + tuple(banking_rules(size - len(book.rules), 100))
    save_playbook(repo, pb.Playbook(rules=rules))
    git.add(repo.root, [repo.playbook_rel])
    git.commit(repo.root, f"playbook: {size} rules\n", only=[repo.playbook_rel])
    return repo


def labelled(ids: set[str]) -> list[tuple[str, str | None, str]]:
    """(task, expected rule or None, group) for the memory holding rule ``ids``."""
    out: list[tuple[str, str | None, str]] = []
    for item in yaml.safe_load((BENCH / "recall_tasks.yaml").read_text())["tasks"]:
        rule = item.get("rule")
        if item["label"] == router.ASK_HUMAN:
            out.append((item["task"], None, "demo unknown"))
        elif rule in ids:
            out.append((item["task"], rule, "demo covered"))
        elif rule:
            out.append((item["task"], None, "demo, rule not in memory"))
    runs = json.loads((DATASETS / "tau-airline" / "gpt-4o-airline.json").read_text())
    out += [(a, None, "airline") for a in dict.fromkeys(r["info"]["task"]["instruction"] for r in runs)]
    for t in items():
        out += [(t["task"], None, "new domains"), (t["reworded"], None, "new domains")]
    return out


def confusion(args: argparse.Namespace) -> None:
    settings = RecallSettings()
    print(
        f"Router confusion matrix, defaults (act_threshold {settings.act_threshold}, floor "
        f"{settings.floor}, act_tag_hits {settings.act_tag_hits})"
    )
    for size in (3, 30, 300):
        with tempfile.TemporaryDirectory() as tmp:
            repo = sized_memory(Path(tmp), size)
            book = pb.parse(repo.playbook_path.read_text())
            ids = {r.id for r in book.rules}
            cases = labelled(ids)
            table: Counter[tuple[str, str]] = Counter()
            wrong_act: list[str] = []
            by_group: Counter[tuple[str, str]] = Counter()
            with open_index(repo) as index:
                for task, expected, group in cases:
                    res = recall(index, task, settings=settings)
                    top = res.rules[0].id if res.rules else None
                    row = "has a rule" if expected else "knows nothing"
                    table[(row, res.verdict)] += 1
                    by_group[(group, res.verdict)] += 1
                    if res.verdict == router.ACT and top != expected:
                        st = res.stats
                        wrong_act.append(
                            f"{task[:60]!r} -> {top} (expected {expected}): confidence "
                            f"{st.best_confidence}, evidence {st.best_evidence}, tag hits "
                            f"{st.best_tag_hits}, words {st.best_matched_words}/{len(st.task_stems)}"
                        )
        print(f"\n{size} rules ({len(cases)} tasks): rows = expected, columns = verdict")
        print("  " + "".ljust(16) + "".join(v.rjust(14) for v in VERDICTS))
        for row in ("has a rule", "knows nothing"):
            print("  " + row.ljust(16) + "".join(str(table[(row, v)]).rjust(14) for v in VERDICTS))
        for group in dict.fromkeys(g for _, _, g in cases):
            counts = {v: by_group[(group, v)] for v in VERDICTS}
            print(f"    {group:28} " + ", ".join(f"{v} {n}" for v, n in counts.items()))
        print(f"  ACT on a wrong rule or an unknown task: {len(wrong_act)}")
        for line in wrong_act:
            print(f"    {line}")


# -- held-out calibration of the coverage rule -------------------------------------------

#: (size, task, expected rule, top rule, coverage, verdict without the rule, verdict
#: with ACT refused by it): what the router does for any coverage threshold.
Case = tuple[int, str, str | None, str | None, float, str, str]


def coverage_cases() -> list[Case]:
    """Every labelled task on the 3/30/300-rule memories, recalled twice: with the
    coverage rule off (``ACT_RULE_COVERAGE`` 0) and refusing every ACT (infinity); the
    verdict at a threshold ``c`` is the first when the best rule's coverage >= ``c``."""
    settings = RecallSettings()
    cases: list[Case] = []
    default = router.ACT_RULE_COVERAGE
    try:
        for size in (3, 30, 300):
            with tempfile.TemporaryDirectory() as tmp:
                repo = sized_memory(Path(tmp), size)
                ids = {r.id for r in pb.parse(repo.playbook_path.read_text()).rules}
                with open_index(repo) as index:
                    for task, expected, _ in labelled(ids):
                        router.ACT_RULE_COVERAGE = 0.0
                        off = recall(index, task, settings=settings)
                        router.ACT_RULE_COVERAGE = math.inf
                        refused = recall(index, task, settings=settings)
                        top = off.rules[0].id if off.rules else None
                        coverage = (off.stats.best_rule_coverage if off.stats else None) or 0.0
                        cases.append((size, task, expected, top, coverage, off.verdict, refused.verdict))
    finally:
        router.ACT_RULE_COVERAGE = default
    return cases


def verdict_at(case: Case, threshold: float) -> str:
    return case[5] if case[4] >= threshold else case[6]


def fit(cases: list[Case]) -> tuple[float, float, float]:
    """The threshold fitted on ``cases`` the way 0.1 was: in the middle of the gap
    between the highest coverage of an ACT on a wrong rule (or an unknown task) and the
    lowest coverage above it of an ACT on the right rule. Returns (threshold, highest
    wrong, lowest right above it); 0.0 when nothing was acted on wrongly."""
    acts = [c for c in cases if c[5] == router.ACT]
    wrong = [c[4] for c in acts if c[3] != c[2]]
    if not wrong:
        return 0.0, 0.0, min((c[4] for c in acts), default=0.0)
    high = max(wrong)
    right = [c[4] for c in acts if c[3] == c[2] and c[4] > high]
    low = min(right, default=high)
    return round((high + low) / 2, 3), high, low


def outcome(cases: list[Case], threshold: float) -> tuple[int, int, int]:
    """(ACT on the right rule, ACT on a wrong rule or unknown task, tasks with a rule)."""
    right = sum(1 for c in cases if verdict_at(c, threshold) == router.ACT and c[3] == c[2])
    wrong = sum(1 for c in cases if verdict_at(c, threshold) == router.ACT and c[3] != c[2])
    return right, wrong, sum(1 for c in cases if c[2])


def held_out(args: argparse.Namespace) -> None:
    cases = coverage_cases()
    tasks = list(dict.fromkeys(c[1] for c in cases))
    half = {task: k % 2 for k, task in enumerate(tasks)}  # alternate, in file order
    print(
        f"\nHeld-out calibration of the coverage rule (ACT needs coverage >= c; default "
        f"{router.ACT_RULE_COVERAGE}): {len(tasks)} distinct tasks split alternately into halves A "
        "and B, each task in the same half at 3, 30 and 300 rules"
    )
    for fit_half, report_half in ((0, 1), (1, 0)):
        fitting = [c for c in cases if half[c[1]] == fit_half]
        report = [c for c in cases if half[c[1]] == report_half]
        threshold, high, low = fit(fitting)
        name, other = "AB"[fit_half], "AB"[report_half]
        print(
            f"  fitted on {name}: wrong ACTs up to coverage {high:.3f}, right ACTs above from "
            f"{low:.3f} -> c = {threshold:g}"
        )
        for label, c in (
            ("no coverage rule", 0.0),
            (f"fitted c = {threshold:g}", threshold),
            (f"default c = {router.ACT_RULE_COVERAGE:g}", router.ACT_RULE_COVERAGE),
        ):
            per_size = []
            for size in (3, 30, 300):
                right, wrong, has = outcome([x for x in report if x[0] == size], c)
                per_size.append(f"{size}: {right}/{has} right ACT, {wrong} wrong")
            right, wrong, has = outcome(report, c)
            sizes = "; ".join(per_size)
            print(f"    on {other}, {label:22} {right}/{has} right ACT, {wrong} wrong ACT  ({sizes})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--router", action="store_true", help="the router confusion matrix (3/30/300 rules)")
    args = parser.parse_args()
    if args.router:
        confusion(args)
        held_out(args)
    else:
        learning(args)


if __name__ == "__main__":
    main()
