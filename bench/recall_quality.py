"""Recall quality: the router's thresholds on the demo memory, and ranking on real data.

Two measurements, each computed in one run beside its baseline:

``--tuning``
    The router defaults. Every task in ``bench/recall_tasks.yaml`` (positives, weak
    matches, unknown tasks, labelled by hand before tuning) is recalled against the
    bundled demo memory; a grid search (steps of 0.0025) over ``act_threshold`` and
    ``floor``, which apply to the best-ranked rule's confidence (``act_tag_hits``
    stays 2, as SPEC section 7 says), picks the pair with the lowest cost (errors +
    unknown tasks sent to ``ACT``), then the middle of the plateau. Prints the
    confusion matrix of the chosen pair and of the configured defaults, on all tasks
    and on the tune/check halves, beside the previous router (the same rule on the
    ranking score, act 9.25 / floor 2.75) in the same run.

default
    Ranking on ``tau2-banking`` (698 bank policy documents as rules, 97 customer tasks
    with the documents each needs), imported through the library into a temporary
    memory repository: each document becomes a rule (title, content with markdown
    headings flattened, tags from the id prefix: category and product, e.g.
    ``doc_credit_cards_gold_rewards_card_001`` -> ``credit-cards``,
    ``gold-rewards-card``) citing one synthetic ``import`` episode, so provenance holds.
    nDCG@10, Recall@10 and Recall@50 of Scarwarden's recall beside ``rank_bm25``'s
    BM25Okapi over the same tokens (scarwarden.text.stems of title + content), and
    how the router grades the banking tasks and the airline tasks of ``tau-airline``
    (another domain) against the banking rules: with the defaults, with thresholds
    calibrated on the banking tasks, and with the previous score router.

    python bench/recall_quality.py --tuning
    python bench/recall_quality.py                # banking + airline
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))

from scarwarden import text  # noqa: E402
from scarwarden.config import RecallSettings  # noqa: E402
from scarwarden.files import playbook as pb  # noqa: E402
from scarwarden.index import open_index  # noqa: E402
from scarwarden.recall import router  # noqa: E402
from scarwarden.recall.engine import recall  # noqa: E402
from scarwarden.repo import MemoryRepo, open_repo  # noqa: E402

#: Beside the checkout, as in CI; BENCH_DATASETS points elsewhere (a worktree).
DATASETS = Path(os.environ.get("BENCH_DATASETS") or BENCH.parent.parent / "shared" / "datasets")
VERDICTS = (router.ACT, router.ACT_AND_FLAG, router.ASK_HUMAN)
#: Permissive settings to see every candidate (and, for the ranking, `share=0.0`: every
#: ranked rule, not only those near the best; recall version 5); verdicts are recomputed
#: per setting.
PROBE = RecallSettings(act_threshold=1.0, floor=0.0, act_tag_hits=10**6, limit=50)
#: The previous router, on the ranking score (kept to show before/after in one run).
SCORE_ACT, SCORE_FLOOR = 9.25, 2.75


Best = tuple[float | None, int, float, float | None, str | None, int | None, int, float | None]


def best_of(res: Any) -> Best:
    """What the router reads from a PROBE recall, the best-ranked rule's (confidence,
    tag hits, evidence), with its score and ID, the task words it matches and the
    task's word count."""
    best = res.stats.best  # also when the verdict (ASK_HUMAN) returns no rules
    words = len(res.stats.task_stems)
    if best is None:
        return (None, 0, 0.0, None, None, None, words, None)
    return (
        best.confidence,
        len(best.matched_tags),
        best.evidence,
        best.score,
        best.id,
        res.stats.best_matched_words,
        words,
        res.stats.best_rule_coverage,
    )


def route(b: Best, settings: RecallSettings) -> str:
    """The router's verdict for a probed best rule under ``settings``."""
    return router.route(b[0], b[1], b[2], settings, matched_words=b[5], task_words=b[6], rule_coverage=b[7])


def score_route(score: float | None, hits: int) -> str:
    """The previous router: the same rule, on the BM25 score."""
    if score is None:
        return router.ASK_HUMAN
    if hits >= 2 or score >= SCORE_ACT:
        return router.ACT
    return router.ACT_AND_FLAG if score >= SCORE_FLOOR else router.ASK_HUMAN


def temp_repo(parent: Path) -> Path:
    root = parent / "repo"
    root.mkdir()
    env_id = ["-c", "user.name=Bench", "-c", "user.email=bench@example.com"]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(
        ["git", *env_id, "-C", str(root), "commit", "-q", "--allow-empty", "--no-gpg-sign", "-m", "root"],
        check=True,
    )
    for key, value in (
        ("user.name", "Bench"),
        ("user.email", "bench@example.com"),
        ("commit.gpgsign", "false"),
    ):
        subprocess.run(["git", "-C", str(root), "config", key, value], check=True)
    return root


# -- tuning -------------------------------------------------------------------------


def matrix(rows: list[tuple[str, str]]) -> str:
    counts = Counter(rows)
    width = max(len(v) for v in VERDICTS) + 2
    out = ["label \\ verdict".ljust(16) + "".join(v.rjust(width) for v in VERDICTS) + "   n"]
    for label in VERDICTS:
        n = sum(counts[(label, v)] for v in VERDICTS)
        out.append(
            label.ljust(16) + "".join(str(counts[(label, v)]).rjust(width) for v in VERDICTS) + f"{n:4d}"
        )
    correct = sum(counts[(v, v)] for v in VERDICTS)
    out.append(
        f"accuracy {correct}/{len(rows)} = {correct / len(rows):.1%}; unknown -> ACT: "
        f"{counts[(router.ASK_HUMAN, router.ACT)]}; known -> ASK_HUMAN: "
        f"{counts[(router.ACT, router.ASK_HUMAN)]}"
    )
    return "\n".join(out)


def tuning(args: argparse.Namespace) -> None:
    import yaml

    from scarwarden.files.scaffold import init

    tasks = yaml.safe_load((BENCH / "recall_tasks.yaml").read_text())["tasks"]
    with tempfile.TemporaryDirectory() as tmp:
        root = temp_repo(Path(tmp))
        init(open_repo(root, initialised=False), demo=True)
        repo = open_repo(root)
        with open_index(repo) as index:
            probes = [(item, best_of(recall(index, item["task"], settings=PROBE, limit=5))) for item in tasks]

    def verdicts(act: float, floor: float, subset: str | None = None) -> list[tuple[str, str]]:
        settings = RecallSettings(act_threshold=act, floor=floor, act_tag_hits=2)
        return [
            (item["label"], route(best, settings)) for item, best in probes if subset in (None, item["split"])
        ]

    def cost(rows: list[tuple[str, str]]) -> tuple[int, int]:
        # Acting confidently on a task memory knows nothing about is the costly error:
        # it counts twice. Ties: fewer of them.
        wrong = sum(1 for label, v in rows if label != v)
        dangerous = sum(1 for label, v in rows if label == router.ASK_HUMAN and v == router.ACT)
        return (wrong + dangerous, dangerous)

    grid = [x / 400 for x in range(0, 401)]

    def choose(subset: str | None) -> tuple[float, float, tuple[int, int]]:
        scored = [(cost(verdicts(a, f, subset)), a, f) for a in grid for f in grid if f <= a]
        best = min(c for c, _, _ in scored)
        acts = sorted({a for c, a, _ in scored if c == best})
        act = acts[len(acts) // 2]
        floors = sorted(f for c, a, f in scored if c == best and a == act)
        return act, floors[len(floors) // 2], best

    print(
        f"Router tuning on the demo memory: {len(tasks)} tasks from bench/recall_tasks.yaml "
        f"({', '.join(f'{n} {k}' for k, n in Counter(t['label'] for t in tasks).items())})"
    )
    print("\nPer task (best-ranked rule: confidence, tag hits, score), by confidence:")
    for item, (conf, hits, evidence, score, rule, _, _, _) in sorted(probes, key=lambda p: p[1][0] or 0.0):
        mark = "" if item.get("rule") in (None, rule) else f"  (expected {item['rule']} first)"
        print(
            f"  {item['label']:<12} {str(rule):<6} conf {conf if conf is not None else '-':>6} "
            f"tags {hits} evid {evidence:<6g} score {score if score is not None else '-':>8}  "
            f"{item['task'][:44]}{mark}"
        )
    front: dict[int, tuple[int, float, float]] = {}
    for a in grid:
        for f in (f for f in grid if f <= a):
            rows = verdicts(a, f)
            wrong = sum(1 for label, v in rows if label != v)
            danger = sum(1 for label, v in rows if label == router.ASK_HUMAN and v == router.ACT)
            if danger not in front or wrong < front[danger][0]:
                front[danger] = (wrong, a, f)
    print("\nFewest errors for each count of unknown tasks sent to ACT (first pair found):")
    for danger, (wrong, a, f) in sorted(front.items()):
        print(f"  unknown->ACT {danger}: {wrong} errors (act_threshold {a}, floor {f})")
    act, floor, best = choose(None)
    plateau = [(a, f) for a in grid for f in grid if f <= a and cost(verdicts(a, f)) == best]
    print(
        f"\nChosen on all tasks (cost = errors + unknown->ACT): act_threshold = {act}, "
        f"floor = {floor}, act_tag_hits = 2 (cost {best[0]}, unknown->ACT {best[1]}); "
        f"plateau: act_threshold {min(a for a, _ in plateau)}-{max(a for a, _ in plateau)}, "
        f"floor {min(f for _, f in plateau)}-{max(f for _, f in plateau)}"
    )
    print(matrix(verdicts(act, floor)))
    tact, tfloor, _ = choose("tune")
    print(
        f"\nChosen on the 'tune' half only: act_threshold = {tact}, floor = {tfloor}; "
        "on the held-out 'check' half:"
    )
    print(matrix(verdicts(tact, tfloor, "check")))
    d = RecallSettings()
    print(
        f"\nConfigured defaults (RecallSettings): act_threshold = {d.act_threshold}, "
        f"floor = {d.floor}, act_tag_hits = {d.act_tag_hits}; all tasks:"
    )
    print(matrix([(item["label"], route(b, d)) for item, b in probes]))
    for group, title in (("short", "the one-line tasks"), ("long", "the multi-sentence tasks")):
        print(f"\nConfigured defaults on {title} only:")
        print(
            matrix(
                [(item["label"], route(b, d)) for item, b in probes if item.get("group", "short") == group]
            )
        )
    print("\nSensitivity of the defaults (all tasks):")
    for a, f in (
        (d.act_threshold, d.floor - 0.01),
        (d.act_threshold, d.floor + 0.01),
        (d.act_threshold - 0.02, d.floor),
        (d.act_threshold + 0.02, d.floor),
    ):
        rows = verdicts(round(a, 4), round(f, 4))
        c = Counter(rows)
        right = sum(c[(v, v)] for v in VERDICTS)
        print(
            f"  act_threshold {a:.4f}, floor {f:.4f}: {right}/{len(rows)} right, "
            f"unknown->ACT {c[(router.ASK_HUMAN, router.ACT)]}"
        )
    print(
        f"\nPrevious router (ranking score, act_threshold {SCORE_ACT}, floor {SCORE_FLOOR}), "
        "same run, all tasks:"
    )
    print(matrix([(item["label"], score_route(b[3], b[1])) for item, b in probes]))
    for group, title in (("short", "the one-line tasks"), ("long", "the multi-sentence tasks")):
        print(f"\nPrevious router on {title} only:")
        print(
            matrix(
                [
                    (item["label"], score_route(b[3], b[1]))
                    for item, b in probes
                    if item.get("group", "short") == group
                ]
            )
        )
    top = [(item["rule"], b[4]) for item, b in probes if item.get("rule")]
    print(f"\nTop-1 rule correct on tasks with an expected rule: {sum(a == b for a, b in top)}/{len(top)}")


# -- banking ranking ------------------------------------------------------------------

CATEGORIES = (
    "business_checking_accounts",
    "business_credit_cards",
    "business_savings_accounts",
    "bank_accounts",
    "checking_accounts",
    "credit_cards",
    "savings_accounts",
    "everyone_pay",
    "buy_now_pay_later",
    "customer_support",
    "personal_subscriptions",
)


def slug(value: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", value.lower()).strip("-")


def doc_tags(doc_id: str) -> list[str]:
    """``doc_<category>_<product>_NNN`` -> [category, product] as slugs."""
    stem = doc_id.removeprefix("doc_").rsplit("_", 1)[0]
    for category in CATEGORIES:
        if stem == category or stem.startswith(category + "_"):
            product = stem[len(category) + 1 :]
            tags = [slug(category)]
            if product and slug(product) != slug(category):
                tags.append(slug(product))
            return tags
    return [slug(stem)]


def flatten(content: str) -> str:
    """Markdown headings become plain lines (a rule's text may not hold headings)."""
    lines = [re.sub(r"^#{1,6}\s*", "", line) for line in content.strip().splitlines()]
    return "\n".join(
        line
        for line in lines
        if not re.match(
            r"^- (Tags|Learnt in|Retired|"
            r"Replaced by):",
            line,
        )
    )


def build_banking(
    root: Path,
    docs: list[dict[str, Any]],
    *,
    with_tags: bool,
    past: list[dict[str, Any]] | None = None,
    taught: bool = False,
) -> MemoryRepo:
    """The documents as rules, all citing one ``import`` episode; ``past``: tasks of the
    other half recorded as episodes (their words form the ledger); ``taught``: each
    past task is also cited by the rules of the documents it needed, as a human's
    answer would be after distillation (that uses the other half's labels)."""
    from scarwarden import git
    from scarwarden.files.playbook_edit import save_playbook
    from scarwarden.files.record import add_episodes
    from scarwarden.files.scaffold import init

    init(open_repo(root, initialised=False))
    repo = open_repo(root)
    inputs: list[dict[str, Any]] = [
        {
            "id": "ep-tau2-import",
            "at": "2026-11-01T00:00:00Z",
            "task": "Import the tau2-banking policy documents",
            "outcome": "Each policy document adopted as a rule",
            "source": "import",
            "tags": ["tau2-banking"],
        }
    ]
    cites: dict[str, list[str]] = {}
    for k, task in enumerate(past or [], 1):
        ep = f"ep-tau2-t{k:04d}"
        inputs.append(
            {"id": ep, "at": "2026-11-02T00:00:00Z", "task": task["instructions"], "outcome": "done"}
        )
        for doc_id in task["required_documents"] if taught else ():
            cites.setdefault(doc_id, []).append(ep)
    add_episodes(repo, inputs, source="tau2-banking", message="episodes: import tau2-banking\n")
    rules = tuple(
        pb.make_rule(
            f"PB-{i:03d}",
            d["title"],
            flatten(d["content"]),
            doc_tags(d["id"]) if with_tags else [],
            ["ep-tau2-import", *cites.get(d["id"], [])],
        )
        for i, d in enumerate(docs, 1)
    )
    save_playbook(repo, pb.Playbook(rules=rules))
    git.add(repo.root, [repo.playbook_rel])
    git.commit(repo.root, "playbook: tau2-banking documents as rules\n", only=[repo.playbook_rel])
    return repo


def window(text_: str, size: int) -> str:
    """About ``size`` characters from the middle of ``text_``, starting at a word."""
    start = text_.rfind(" ", 0, max(0, len(text_) // 2 - size // 2)) + 1
    return text_[start : start + size]


def metrics(ranked: list[list[str]], relevant: list[set[str]]) -> dict[str, float]:
    ndcg = r10 = r50 = 0.0
    for ids, rel in zip(ranked, relevant, strict=True):
        dcg = sum(1 / math.log2(k + 2) for k, x in enumerate(ids[:10]) if x in rel)
        ideal = sum(1 / math.log2(k + 2) for k in range(min(10, len(rel))))
        ndcg += dcg / ideal
        r10 += len(rel & set(ids[:10])) / len(rel)
        r50 += len(rel & set(ids[:50])) / len(rel)
    n = len(ranked)
    return {"nDCG@10": ndcg / n, "Recall@10": r10 / n, "Recall@50": r50 / n}


def router_probes(
    index: Any, held: list[dict[str, Any]], airline: list[str], bests: dict[str, list[Best]]
) -> None:
    """The best-ranked rule for airline tasks, and length controls of in-domain text."""
    for instruction in airline:
        bests.setdefault("airline tasks", []).append(
            best_of(recall(index, instruction, settings=PROBE, limit=1))
        )
    # Length controls: in-domain text as short as the airline tasks.
    size = round(statistics.mean(len(a) for a in airline))
    for task in held:
        res = recall(index, window(task["instructions"], size), settings=PROBE, limit=1)
        bests.setdefault("banking windows", []).append(best_of(res))
        if task.get("notes"):
            res = recall(index, task["notes"], settings=PROBE, limit=1)
            bests.setdefault("banking notes", []).append(best_of(res))


def banking(args: argparse.Namespace) -> None:
    from rank_bm25 import BM25Okapi

    docs = [
        json.loads(line) for line in (DATASETS / "tau2-banking" / "documents.jsonl").read_text().splitlines()
    ]
    tasks = [
        json.loads(line) for line in (DATASETS / "tau2-banking" / "tasks.jsonl").read_text().splitlines()
    ]
    runs = json.loads((DATASETS / "tau-airline" / "gpt-4o-airline.json").read_text())
    airline = list(dict.fromkeys(r["info"]["task"]["instruction"] for r in runs))
    rule_of = {f"PB-{i:03d}": d["id"] for i, d in enumerate(docs, 1)}
    defaults = RecallSettings()
    print(
        f"tau2-banking: {len(docs)} documents as rules, {len(tasks)} tasks "
        f"(query = instructions); {len(airline)} unique airline tasks"
    )
    halves = (tasks[0::2], tasks[1::2])
    configs = (
        ("scarwarden recall, no ledger", {"with_tags": True}),
        ("scarwarden recall, no tags, no ledger", {"with_tags": False}),
        ("scarwarden + ledger (past tasks' words)", {"with_tags": True, "ledger": True}),
        ("scarwarden + ledger + taught episodes", {"with_tags": True, "ledger": True, "taught": True}),
    )
    per_half: dict[str, list[dict[str, float]]] = {}
    explained = total_rules = 0
    bests: dict[str, list[Best]] = {}
    returned: list[int] = []
    timings: dict[str, list[float]] = {}
    for h, (past, held) in enumerate(((halves[0], halves[1]), (halves[1], halves[0]))):
        for label, cfg in configs:
            with tempfile.TemporaryDirectory() as tmp:
                repo = build_banking(
                    temp_repo(Path(tmp)),
                    docs,
                    with_tags=bool(cfg["with_tags"]),
                    past=list(past) if cfg.get("ledger") else [],
                    taught=bool(cfg.get("taught")),
                )
                ranked = []
                with open_index(repo) as index:
                    for task in held:
                        # CPU time: the shared machine's load moves wall time 2-4x.
                        start = time.process_time()
                        res = recall(index, task["instructions"], settings=PROBE, limit=50, share=0.0)
                        timings.setdefault(label, []).append(time.process_time() - start)
                        ranked.append([rule_of[r.id] for r in res.rules])
                        for r in res.rules:
                            total_rules += 1
                            summed = sum(r.contributions.values())
                            # each contribution is rounded to 4 decimals (docs/recall.md)
                            slack = 1e-4 * (len(r.contributions) + 1)
                            explained += bool(r.contributions) and abs(summed - r.score) <= slack
                        if h == 0 and cfg.get("ledger") and not cfg.get("taught"):
                            bests.setdefault("banking tasks", []).append(best_of(res))
                            returned.append(len(recall(index, task["instructions"], settings=defaults).rules))
                    if h == 0 and cfg.get("ledger") and not cfg.get("taught"):
                        router_probes(index, held, airline, bests)
                per_half.setdefault(label, []).append(
                    metrics(ranked, [set(t["required_documents"]) for t in held])
                )
    corpus = [text.stems(d["title"] + "\n" + d["content"]) for d in docs]
    bm25 = BM25Okapi(corpus)
    for past, held in ((halves[0], halves[1]), (halves[1], halves[0])):
        ranked = []
        for task in held:
            scores = bm25.get_scores(text.stems(task["instructions"]))
            order = sorted(range(len(docs)), key=lambda i: (-scores[i], i))[:50]
            ranked.append([docs[i]["id"] for i in order])
        per_half.setdefault("rank_bm25 BM25Okapi (same tokens)", []).append(
            metrics(ranked, [set(t["required_documents"]) for t in held])
        )
    base = statistics.mean(m["nDCG@10"] for m in per_half["rank_bm25 BM25Okapi (same tokens)"])
    print(
        "\nEach figure: the mean over the two halves, each measured on the half its ledger did "
        "not see (even tasks learn, odd tasks report; then the reverse)."
    )
    print(f"\n{'':42}{'nDCG@10':>9}{'Recall@10':>11}{'Recall@50':>11}{'x BM25':>8}   halves (nDCG@10)")
    for label, ms in per_half.items():
        m = {k: statistics.mean(x[k] for x in ms) for k in ms[0]}
        print(
            f"{label:42}{m['nDCG@10']:9.3f}{m['Recall@10']:11.3f}{m['Recall@50']:11.3f}"
            f"{m['nDCG@10'] / base:7.2f}x   " + " / ".join(f"{x['nDCG@10']:.3f}" for x in ms)
        )
    print(
        f"\nEvery returned rule explained (contributions present and summing to its score): "
        f"{explained}/{total_rules}"
    )
    chars = statistics.mean(len(t["instructions"]) for t in tasks)
    print(f"recall CPU p50 on these tasks (limit 50; long tasks: mean {chars:.0f} chars):")
    for label, values in timings.items():
        print(f"    {label:50} {statistics.median(values) * 1000:6.1f} ms")
    size = round(statistics.mean(len(a) for a in airline))
    lengths = {
        "banking tasks": [len(t["instructions"]) for t in tasks],
        "airline tasks": [len(a) for a in airline],
        "banking windows": [len(window(t["instructions"], size)) for t in tasks],
        "banking notes": [len(t["notes"]) for t in tasks if t.get("notes")],
    }
    print(
        f"(banking windows: the middle {size} characters of each banking task, the airline "
        "tasks' mean length;\n banking notes: the annotators' summaries, where present)"
    )
    print(
        "\nBest-ranked rule against the banking rules: min / 5th pct / median / 95th pct / "
        "max, and task length:"
    )
    for name, values in bests.items():
        for what, k in (("score", 3), ("confidence", 0), ("evidence", 2)):
            xs = sorted(v[k] or 0.0 for v in values)
            print(
                f"  {name:15} {what:10} "
                + " ".join(f"{xs[min(len(xs) - 1, int(p * len(xs)))]:8.4g}" for p in (0, 0.05, 0.5, 0.95, 1))
                + f"   mean {statistics.mean(lengths[name]):.0f} chars"
            )
    print("How well each number tells in-domain from airline text, P(in-domain > airline):")
    for name in ("banking tasks", "banking windows", "banking notes"):
        aucs = []
        for k in (0, 3):
            ins = [v[k] or 0.0 for v in bests[name]]
            air = [v[k] or 0.0 for v in bests["airline tasks"]]
            aucs.append(sum((x > y) + 0.5 * (x == y) for x in ins for y in air) / (len(ins) * len(air)))
        print(f"  {name:15} confidence {aucs[0]:.3f}, score {aucs[1]:.3f}")
    bank = sorted(v[0] or 0.0 for v in bests["banking tasks"])
    calibrated = RecallSettings(
        act_threshold=round(statistics.median(bank), 4), floor=round(bank[len(bank) // 20], 4)
    )

    def show(name: str, values: list[Any], route: Any) -> None:
        counts = Counter(route(v) for v in values)
        n = len(values)
        print(f"  {name:15} " + ", ".join(f"{v} {counts[v]}/{n} ({counts[v] / n:.0%})" for v in VERDICTS))

    for title, settings in (
        ("the defaults", defaults),
        (
            "thresholds calibrated on the banking tasks (floor = the 5th "
            "percentile of their confidence, act = its median)",
            calibrated,
        ),
    ):
        print(
            f"\nRouter with {title}: act_threshold {settings.act_threshold}, floor "
            f"{settings.floor}, act_tag_hits {settings.act_tag_hits}"
        )
        for name, values in bests.items():
            show(name, values, lambda v, s=settings: route(v, s))
    print(f"\nPrevious router (ranking score, act_threshold {SCORE_ACT}, floor {SCORE_FLOOR}):")
    for name, values in bests.items():
        show(name, values, lambda v: score_route(v[3], v[1]))
    print(
        f"\nRules returned per banking task with the defaults (limit {defaults.limit}): "
        f"mean {statistics.mean(returned):.2f}, min {min(returned)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tuning", action="store_true", help="tune the router thresholds on the demo memory")
    args = parser.parse_args()
    tuning(args) if args.tuning else banking(args)


if __name__ == "__main__":
    main()
