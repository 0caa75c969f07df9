"""Exploring the 1.2x target: lexical, model-free ideas for tau2-banking recall.

An exploration (issue 13's last miss), not product code: every idea is a change a
lexical, deterministic, explained recall could adopt, measured with the protocol of
``bench/recall_quality.py``: the 97 tasks are split into halves (even / odd); anything
an idea learns (a weight, a threshold, a list of boilerplate words, a prior) is fitted
on one half, *using that half's labels when the idea says so*, and nDCG@10 is reported
on the other half only; then the halves swap. The reported half's labels are read only
by ``metrics`` (never by a fit).

The scoring is an in-memory re-implementation of recall's score (docs/recall.md: BM25
over the stems of title + text, Lucene idf, tag hits worth 3.0, the ledger weight of
each query word over the fitting half's tasks), on the product's own text pipeline
(``scarwarden.text``), tags and flattening (imported from ``bench/recall_quality.py``);
its ``product`` row reproduces ``recall_quality.py``'s "ledger (past tasks' words)"
figure, and ``rank_bm25`` is the baseline measured in the same run.

    python bench/recall_explore.py
    python bench/recall_explore.py --splits 4   # the key rows over 4 random halvings
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))

from recall_quality import DATASETS, doc_tags, flatten, metrics  # noqa: E402

from scarwarden import text  # noqa: E402

Task = dict[str, Any]


@dataclass(frozen=True)
class Params:
    """One recall variant. The defaults are the product's score (docs/recall.md)."""

    k1: float = 1.5
    b: float = 0.75
    title_w: float = 1.0  # a title stem counts title_w times in tf (product: 1)
    tag_w: float = 3.0  # a tag hit (product: 3.0)
    ledger: str = "product"  # query-word weight over past tasks: product | none | pow | idf
    ledger_pow: float = 1.0  # ledger(t) ** ledger_pow ("pow")
    stop_frac: float = 1.0  # drop query words said by more than this share of past tasks
    qtf: str = "raw"  # raw | binary | log | sat (BM25's k3 = 1.2)
    prf_docs: int = 0  # RM3: expand with the top prf_docs rules' words ...
    prf_terms: int = 20  # ... the prf_terms heaviest of them ...
    prf_w: float = 0.0  # ... weighted prf_w of the query's mass
    bigram_w: float = 0.0  # adjacent-stem pairs as extra terms
    prior_w: float = 0.0  # + prior_w x log(1 + times the rule was cited by past tasks)
    rsj_w: float = 0.0  # blend of a learnt per-word usefulness (past tasks' labels)
    pair_ledger: str = "pair"  # a pair's weight: its own ledger weight (pair) or its weaker word's


class Corpus:
    """The 698 documents as rules: stems of title and text, tags, lengths."""

    def __init__(self, docs: list[dict[str, Any]]) -> None:
        self.ids = [d["id"] for d in docs]
        self.n = len(docs)
        self.title = [text.stems(d["title"]) for d in docs]
        self.body = [text.stems(flatten(d["content"])) for d in docs]
        self.tags = [[text.tag_stems(t) for t in doc_tags(d["id"])] for d in docs]
        self.tf_title = [Counter(t) for t in self.title]
        self.tf_body = [Counter(t) for t in self.body]
        self.lengths = np.array([len(a) + len(b) for a, b in zip(self.title, self.body, strict=True)], float)
        self.avglen = float(self.lengths.mean())
        self.df: Counter[str] = Counter()
        for a, b in zip(self.title, self.body, strict=True):
            self.df.update(set(a) | set(b))
        self.bi_tf = [Counter(bigrams(a) + bigrams(b)) for a, b in zip(self.title, self.body, strict=True)]
        self.bi_post: dict[str, list[int]] = {}
        for i, c in enumerate(self.bi_tf):
            for pair in c:
                self.bi_post.setdefault(pair, []).append(i)
        self.terms = [set(a) | set(b) for a, b in zip(self.title, self.body, strict=True)]
        self.post: dict[str, list[int]] = {}
        for i, (ta, tb) in enumerate(zip(self.tf_title, self.tf_body, strict=True)):
            for t in ta.keys() | tb.keys():
                self.post.setdefault(t, []).append(i)
        self._cols: dict[tuple[str, float, float, float], np.ndarray] = {}

    def idf(self, df: int) -> float:
        return math.log(1 + (self.n - df + 0.5) / (df + 0.5))

    def column(self, t: str, p: Params) -> np.ndarray:
        """idf(t) x BM25 saturation of tf(t, r) for every rule (the per-rule term part)."""
        key = (t, p.k1, p.b, p.title_w)
        col = self._cols.get(key)
        if col is None:
            col = np.zeros(self.n)
            rows = self.post.get(t, [])
            if rows:
                tf = np.array([self.tf_body[i][t] + p.title_w * self.tf_title[i][t] for i in rows])
                norm = p.k1 * (1 - p.b + p.b * self.lengths[rows] / self.avglen)
                col[rows] = self.idf(self.df[t]) * tf * (p.k1 + 1) / (tf + norm)
            self._cols[key] = col
        return col

    def bigram_column(self, pair: str, p: Params) -> np.ndarray:
        """The same BM25 part for an adjacent-stem pair (idf over the pair's own df)."""
        key = (pair, p.k1, p.b, -1.0)
        col = self._cols.get(key)
        if col is None:
            col = np.zeros(self.n)
            rows = self.bi_post.get(pair, [])
            if rows:
                tf = np.array([self.bi_tf[i][pair] for i in rows], float)
                norm = p.k1 * (1 - p.b + p.b * self.lengths[rows] / self.avglen)
                col[rows] = self.idf(len(rows)) * tf * (p.k1 + 1) / (tf + norm)
            self._cols[key] = col
        return col


def bigrams(stems: list[str]) -> list[str]:
    return [f"{a} {b}" for a, b in itertools.pairwise(stems)]


class Learnt:
    """What one half's tasks teach: their words (the ledger) and, for the ideas that use
    labels, which rules they needed."""

    def __init__(self, corpus: Corpus, past: list[Task]) -> None:
        self.corpus_pairs = corpus.bi_post
        self.count = len(past) + 1  # + the import episode, as in recall_quality.py
        self.task_df: Counter[str] = Counter(text.stems("Import the tau2-banking policy documents"))
        self.task_df = Counter(set(self.task_df))
        self.pair_df: Counter[str] = Counter()
        for task in past:
            stems = text.stems(task["instructions"])
            self.task_df.update(set(stems))
            self.pair_df.update(set(bigrams(stems)))
        index = {d: i for i, d in enumerate(corpus.ids)}
        cited = Counter(index[d] for task in past for d in task["required_documents"])
        self.prior = np.array([math.log1p(cited[i]) for i in range(corpus.n)])
        self.usefulness = self._usefulness(corpus, past, index)

    def _usefulness(self, corpus: Corpus, past: list[Task], index: dict[str, int]) -> dict[str, float]:
        """Per word: how often a past task that said it needed a rule that says it
        (Robertson/Sparck Jones relevance, smoothed): the share of such needed rules over
        the share among all rules."""
        hit: Counter[str] = Counter()
        seen: Counter[str] = Counter()
        for task in past:
            needed = [index[d] for d in task["required_documents"]]
            for t in set(text.stems(task["instructions"])):
                hit[t] += sum(1 for i in needed if t in corpus.terms[i])
                seen[t] += len(needed)
        out = {}
        for t, n in seen.items():
            p_rel = (hit[t] + 0.5) / (n + 1)
            p_all = (corpus.df.get(t, 0) + 0.5) / (corpus.n + 1)
            out[t] = max(0.0, math.log(p_rel / p_all))
        return out

    def ledger(self, t: str) -> float:
        return 1 - max(0, self.task_df.get(t, 0) - 1) / (self.count + 10)

    def pair_ledger(self, pair: str) -> float:
        """The ledger weight of a pair, from how many past tasks say the pair itself."""
        return 1 - max(0, self.pair_df.get(pair, 0) - 1) / (self.count + 10)


def query_weights(stems: list[str], learnt: Learnt, p: Params) -> dict[str, float]:
    """Each distinct query stem's multiplier: qtf transform x ledger weight (x learnt
    usefulness); stems past tasks nearly all say are dropped (``stop_frac``)."""
    weights = {}
    for t, q in Counter(stems).items():
        share = learnt.task_df.get(t, 0) / learnt.count
        if share > p.stop_frac:
            continue
        qw = {"raw": q, "binary": 1, "log": 1 + math.log(q), "sat": q * 2.2 / (q + 1.2)}[p.qtf]
        if p.ledger == "product":
            lw = learnt.ledger(t)
        elif p.ledger == "pow":
            lw = max(0.0, learnt.ledger(t)) ** p.ledger_pow
        elif p.ledger == "idf":  # idf over the past tasks, scaled to 1 for a word no task says
            lw = math.log(1 + learnt.count / (learnt.task_df.get(t, 0) + 0.5)) / math.log(
                1 + learnt.count / 0.5
            )
        else:
            lw = 1.0
        if p.rsj_w:
            lw *= (1 - p.rsj_w) + p.rsj_w * learnt.usefulness.get(t, 1.0)
        weights[t] = qw * lw
    return weights


def pair_weights(stems: list[str], learnt: Learnt, p: Params) -> dict[str, float]:
    """Each adjacent pair the rules also say: qtf transform x the pair's own ledger weight
    (``ledger`` pair mode) or its weaker word's weight (``word``): the boilerplate pair
    "custom support", in every role-play, must count less even though each rule rarely
    says it."""
    out = {}
    word = query_weights(stems, learnt, p) if p.pair_ledger == "word" else {}
    for pair, q in Counter(bigrams(stems)).items():
        if pair not in learnt.corpus_pairs:
            continue
        if p.pair_ledger == "word":
            a, b = pair.split(" ")
            out[pair] = min(word.get(a, 0.0), word.get(b, 0.0))
        else:
            qw = {"raw": q, "binary": 1, "log": 1 + math.log(q), "sat": q * 2.2 / (q + 1.2)}[p.qtf]
            out[pair] = qw * max(0.0, learnt.pair_ledger(pair)) ** p.ledger_pow
    return out


def score(corpus: Corpus, learnt: Learnt, query: str, p: Params) -> np.ndarray:
    stems = text.stems(query)
    weights = query_weights(stems, learnt, p)
    scores = first_pass(corpus, learnt, stems, weights, p)
    if p.prf_docs and p.prf_w:
        expansion = rm3_terms(corpus, scores, p)
        mass = sum(weights.values())
        for t, e in expansion.items():
            scores += p.prf_w * mass * e * corpus.column(t, p)
    if p.prior_w:
        scores = scores + p.prior_w * learnt.prior
    return scores


def first_pass(
    corpus: Corpus, learnt: Learnt, stems: list[str], weights: dict[str, float], p: Params
) -> np.ndarray:
    scores = np.zeros(corpus.n)
    for t, w in weights.items():
        scores += w * corpus.column(t, p)
    present = set(stems)
    for i, tags in enumerate(corpus.tags):
        for parts in tags:
            if parts and all(s in present for s in parts):
                scores[i] += p.tag_w * min(learnt.ledger(s) for s in parts)
    if p.bigram_w:
        for pair, w in pair_weights(stems, learnt, p).items():
            scores += p.bigram_w * w * corpus.bigram_column(pair, p)
    return scores


def rm3_terms(corpus: Corpus, scores: np.ndarray, p: Params) -> dict[str, float]:
    """RM3's relevance model: p(t | R) = sum over the top rules of their normalised score x
    tf(t, r) / len(r), times idf (so the expansion is distinctive); the heaviest
    ``prf_terms``, normalised to sum 1."""
    top = np.argsort(-scores, kind="stable")[: p.prf_docs]
    total = float(scores[top].sum()) or 1.0
    model: Counter[str] = Counter()
    for i in top:
        share = float(scores[i]) / total
        length = corpus.lengths[i]
        for t, tf in (corpus.tf_body[i] + corpus.tf_title[i]).items():
            model[t] += share * tf / length * corpus.idf(corpus.df[t])
    best = model.most_common(p.prf_terms)
    mass = sum(v for _, v in best) or 1.0
    return {t: v / mass for t, v in best}


def rank(scores: np.ndarray, corpus: Corpus) -> list[str]:
    order = np.lexsort((np.arange(corpus.n), -scores))[:50]
    return [corpus.ids[i] for i in order]


def ndcg(corpus: Corpus, learnt: Learnt | list[Learnt], tasks: list[Task], p: Params) -> float:
    """nDCG@10 over ``tasks``; ``learnt`` is one for all, or one per task (leave one out)."""
    per = learnt if isinstance(learnt, list) else [learnt] * len(tasks)
    ranked = [rank(score(corpus, lt, t["instructions"], p), corpus) for lt, t in zip(per, tasks, strict=True)]
    return metrics(ranked, [set(t["required_documents"]) for t in tasks])["nDCG@10"]


# -- fitting ------------------------------------------------------------------------


def fit(
    corpus: Corpus, learnt: list[Learnt], tasks: list[Task], start: Params, grid: Mapping[str, Iterable[Any]]
) -> Params:
    """Coordinate ascent on the fitting half's nDCG@10 over ``grid`` (two sweeps; ties keep
    the earlier value, so the result is deterministic)."""
    best, best_value = start, ndcg(corpus, learnt, tasks, start)
    for _ in range(2):
        for name, values in grid.items():
            for v in values:
                cand = replace(best, **{name: v})
                value = ndcg(corpus, learnt, tasks, cand)
                if value > best_value + 1e-9:
                    best, best_value = cand, value
    return best


IDEAS: dict[str, tuple[Params, dict[str, list[Any]]]] = {
    "product (ledger of past tasks' words)": (Params(), {}),
    "BM25 k1 / b fitted": (
        Params(),
        {"k1": [0.6, 0.9, 1.2, 1.5, 2.0, 3.0, 4.0, 6.0], "b": [0.3, 0.5, 0.75, 0.9, 1.0]},
    ),
    "title / tag weights fitted": (
        Params(),
        {"title_w": [0, 1, 2, 3, 5, 8], "tag_w": [0, 1, 3, 6, 10, 15]},
    ),
    "query tf transform fitted": (Params(), {"qtf": ["raw", "binary", "log", "sat"]}),
    "ledger weight sharpened (power fitted)": (
        Params(ledger="pow"),
        {"ledger_pow": [1, 2, 3, 5, 8, 12]},
    ),
    "ledger as idf over past tasks": (Params(ledger="idf"), {}),
    "boilerplate stopwords (share fitted)": (
        Params(),
        {"stop_frac": [1.0, 0.8, 0.6, 0.5, 0.4, 0.3, 0.2]},
    ),
    "bigrams, weighed as their weaker word (fitted)": (
        Params(pair_ledger="word"),
        {"bigram_w": [0, 0.25, 0.5, 1, 2, 3, 4]},
    ),
    "bigrams, own ledger weight (fitted)": (Params(), {"bigram_w": [0, 0.25, 0.5, 1, 2, 3, 4]}),
    "pairs x1 as their weaker word, nothing fitted": (Params(bigram_w=1.0, pair_ledger="word"), {}),
    "RM3 pseudo-relevance feedback (fitted)": (
        Params(prf_w=0.5, prf_docs=5),
        {"prf_docs": [3, 5, 10], "prf_terms": [10, 20, 40], "prf_w": [0, 0.1, 0.25, 0.5, 1.0]},
    ),
    "* word usefulness from past labels (RSJ)": (Params(), {"rsj_w": [0, 0.25, 0.5, 0.75, 1.0]}),
    "* citation prior from past labels": (Params(), {"prior_w": [0, 0.5, 1, 2, 4, 8]}),
}

LEXICAL: dict[str, list[Any]] = {
    "bigram_w": [0, 0.5, 1, 2, 3],
    "k1": [0.9, 1.2, 1.5, 2.0, 3.0, 4.0],
    "b": [0.3, 0.5, 0.75, 0.9],
    "title_w": [0, 1, 2, 3, 5],
    "tag_w": [0, 1, 3, 6, 10],
    "qtf": ["raw", "log", "sat"],
    "ledger_pow": [1, 2, 3, 5, 8],
    "stop_frac": [1.0, 0.6, 0.4, 0.2],
    "prf_docs": [0, 5, 10],
    "prf_w": [0, 0.1, 0.25, 0.5],
}
COMBOS: dict[str, tuple[Params, dict[str, list[Any]]]] = {
    "bigrams + BM25 k1 / b, fitted together": (
        Params(),
        {"bigram_w": [0, 0.5, 1, 2, 3], "k1": [1.2, 1.5, 2.0, 3.0, 4.0], "b": [0.5, 0.75, 0.9]},
    ),
    "all label-free ideas, fitted together": (Params(ledger="pow"), LEXICAL),
    # The knobs the ablation below found to hold up (chosen after seeing it: a mild
    # peek at the held-out halves in *which* knobs, never in their values).
    "bigrams + ledger power + query tf, fitted": (
        Params(ledger="pow"),
        {"bigram_w": [0, 0.5, 1, 2, 3], "ledger_pow": [1, 2, 3, 5], "qtf": ["raw", "log", "sat"]},
    ),
    "* all ideas incl. past labels, fitted together": (
        Params(ledger="pow"),
        {**LEXICAL, "rsj_w": [0, 0.5, 1.0], "prior_w": [0, 1, 2, 4]},
    ),
}


def baseline(corpus: Corpus, docs: list[dict[str, Any]], held: list[Task]) -> float:
    from rank_bm25 import BM25Okapi

    bm25 = BM25Okapi([text.stems(d["title"] + "\n" + d["content"]) for d in docs])
    ranked = []
    for task in held:
        s = bm25.get_scores(text.stems(task["instructions"]))
        ranked.append([corpus.ids[i] for i in sorted(range(corpus.n), key=lambda i: (-s[i], i))[:50]])
    return metrics(ranked, [set(t["required_documents"]) for t in held])["nDCG@10"]


def run(
    corpus: Corpus,
    halves: tuple[list[Task], list[Task]],
    name: str,
    idea: tuple[Params, dict[str, list[Any]]],
) -> tuple[list[float], list[Params]]:
    values, chosen = [], []
    for fit_half, held in ((halves[0], halves[1]), (halves[1], halves[0])):
        learnt = Learnt(corpus, fit_half)
        # Fitting queries each fitting task against what the *other* fitting tasks teach
        # (leave one out): a task must not find its own words or labels in the ledger.
        p = fit(corpus, loo(corpus, fit_half), fit_half, idea[0], idea[1]) if idea[1] else idea[0]
        values.append(ndcg(corpus, learnt, held, p))
        chosen.append(p)
    return values, chosen


_LOO: dict[tuple[str, ...], list[Learnt]] = {}


def loo(corpus: Corpus, half: list[Task]) -> list[Learnt]:
    key = tuple(t["id"] for t in half)
    if key not in _LOO:
        _LOO[key] = [Learnt(corpus, half[:k] + half[k + 1 :]) for k in range(len(half))]
    return _LOO[key]


def describe(p: Params) -> str:
    base = Params()
    return ", ".join(f"{k}={v}" for k, v in vars(p).items() if v != getattr(base, k)) or "product defaults"


def cost(corpus: Corpus, learnt: Learnt, tasks: list[Task], p: Params) -> float:
    score(corpus, learnt, tasks[0]["instructions"], p)  # warm the per-term columns
    times = []
    for task in tasks:
        start = time.process_time()
        score(corpus, learnt, task["instructions"], p)
        times.append(time.process_time() - start)
    return statistics.median(times) * 1000


ABLATIONS: dict[str, dict[str, Any]] = {
    "bigrams": {"bigram_w": 0.0},
    "title weight": {"title_w": 1.0},
    "tag weight": {"tag_w": 3.0},
    "k1 / b": {"k1": 1.5, "b": 0.75},
    "ledger power": {"ledger_pow": 1.0},
    "query tf": {"qtf": "raw"},
    "RM3": {"prf_w": 0.0},
}


def ablate(corpus: Corpus, halves: tuple[list[Task], list[Task]], chosen: list[Params], base: float) -> None:
    """The label-free combination with one idea put back to the product's value, held out."""
    print("\nAblation of the label-free combination (each half keeps its fitted values but one):")
    for name, back in ABLATIONS.items():
        values = [
            ndcg(corpus, Learnt(corpus, fit_half), held, replace(p, **back))
            for p, (fit_half, held) in zip(
                chosen, ((halves[0], halves[1]), (halves[1], halves[0])), strict=True
            )
        ]
        mean = statistics.mean(values)
        print(
            f"  without {name:14} {mean:.3f} ({mean / base:.3f}x)   " + " / ".join(f"{v:.3f}" for v in values)
        )


def explain(corpus: Corpus, learnt: Learnt, task: Task, p: Params) -> None:
    """The best-ranked rule's score for one held-out task, part by part, as recall's
    --explain would print it under this combination."""
    stems = text.stems(task["instructions"])
    weights = query_weights(stems, learnt, p)
    top = int(np.lexsort((np.arange(corpus.n), -score(corpus, learnt, task["instructions"], p)))[0])
    parts: list[tuple[float, str]] = []
    present = set(stems)
    for tag, tparts in zip(doc_tags(corpus.ids[top]), corpus.tags[top], strict=True):
        if tparts and all(s in present for s in tparts):
            parts.append((p.tag_w * min(learnt.ledger(s) for s in tparts), f"tag:{tag} = {p.tag_w} x ledger"))
    for t, w in weights.items():
        v = w * corpus.column(t, p)[top]
        if v:
            tf = corpus.tf_body[top][t] + p.title_w * corpus.tf_title[top][t]
            parts.append(
                (
                    v,
                    f"term:{t} = qw {w:.3f} x idf {corpus.idf(corpus.df[t]):.3f} x tf {tf:g} "
                    f"BM25(k1 {p.k1}, b {p.b})",
                )
            )
    for pair, w in (pair_weights(stems, learnt, p) if p.bigram_w else {}).items():
        v = corpus.bigram_column(pair, p)[top]
        if v:
            parts.append((p.bigram_w * w * v, f"pair:{pair} = {p.bigram_w} x qw {w:.3f} x pair BM25"))
    parts.sort(reverse=True)
    print(
        f"\nExplained, held-out {task['id']} under the even half's fit ({describe(p)}): "
        f"best rule {corpus.ids[top]} "
        f"({'needed' if corpus.ids[top] in task['required_documents'] else 'not needed'}), "
        f"score {sum(v for v, _ in parts):.3f}, its 8 largest parts of {len(parts)}:"
    )
    for v, why in parts[:8]:
        print(f"  {v:8.3f}  {why}")


SPLIT_ROWS: dict[str, tuple[Params, dict[str, list[Any]]]] = {
    "product (ledger of past tasks' words)": (Params(), {}),
    # The candidate product change, its weight named after this exploration (not fitted).
    "pairs x1 as their weaker word, nothing fitted": IDEAS["pairs x1 as their weaker word, nothing fitted"],
    "bigrams, weighed as their weaker word (fitted)": IDEAS["bigrams, weighed as their weaker word (fitted)"],
    "all label-free ideas, fitted together": COMBOS["all label-free ideas, fitted together"],
}


def splits(corpus: Corpus, docs: list[dict[str, Any]], tasks: list[Task], count: int) -> None:
    """The even / odd split is one draw: the key rows again over ``count`` seeded random
    halvings, each reported as the mean of its two held-out halves against BM25 on them."""
    print(f"Robustness: {count} seeded random halvings (seeds 1-{count}), x BM25 on the same halves")
    ratios: dict[str, list[float]] = {}
    for seed in range(1, count + 1):
        order = list(tasks)
        random.Random(seed).shuffle(order)
        halves = (order[0::2], order[1::2])
        base = statistics.mean([baseline(corpus, docs, halves[1]), baseline(corpus, docs, halves[0])])
        line = [f"seed {seed}: BM25 {base:.3f}"]
        for name, idea in SPLIT_ROWS.items():
            mean = statistics.mean(run(corpus, halves, name, idea)[0])
            ratios.setdefault(name, []).append(mean / base)
            line.append(f"{mean:.3f} ({mean / base:.3f}x)")
        print("  " + ", ".join(line), flush=True)
    for name, values in ratios.items():
        print(
            f"  {name:50} x BM25 mean {statistics.mean(values):.3f}, min {min(values):.3f}, "
            f"max {max(values):.3f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--splits", type=int, default=0, help="the key rows over N random halvings")
    args = parser.parse_args()
    docs = [json.loads(x) for x in (DATASETS / "tau2-banking" / "documents.jsonl").read_text().splitlines()]
    tasks = [json.loads(x) for x in (DATASETS / "tau2-banking" / "tasks.jsonl").read_text().splitlines()]
    corpus = Corpus(docs)
    if args.splits:
        splits(corpus, docs, tasks, args.splits)
        return
    halves = (tasks[0::2], tasks[1::2])
    base_halves = [baseline(corpus, docs, halves[1]), baseline(corpus, docs, halves[0])]
    base = statistics.mean(base_halves)
    print(
        f"tau2-banking: {corpus.n} rules, {len(tasks)} tasks; fit on one half, report on the other, "
        "then swap.\n(* = the idea reads the fitting half's labels, as citations a human's answers "
        "would give)\n"
    )
    print(f"{'idea':50}{'nDCG@10':>8}{'x BM25':>8}  held-out halves   chosen (fit on even / on odd)")
    print(
        f"{'rank_bm25 BM25Okapi, same tokens':50}{base:8.3f}{1:7.3f}x  "
        + " / ".join(f"{v:.3f}" for v in base_halves)
    )
    results: dict[str, tuple[float, list[Params]]] = {}
    for name, idea in (*IDEAS.items(), *COMBOS.items()):
        values, chosen = run(corpus, halves, name, idea)
        mean = statistics.mean(values)
        results[name] = (mean, chosen)
        print(
            f"{name:50}{mean:8.3f}{mean / base:7.3f}x  "
            + " / ".join(f"{v:.3f}" for v in values)
            + "   "
            + " | ".join(describe(p) for p in chosen),
            flush=True,
        )
    ablate(corpus, halves, results["all label-free ideas, fitted together"][1], base)
    learnt = Learnt(corpus, halves[0])
    explain(corpus, learnt, halves[1][0], results["all label-free ideas, fitted together"][1][0])
    explain(corpus, learnt, halves[1][0], results["pairs x1 as their weaker word, nothing fitted"][1][0])
    print("\nCPU per query (p50, held-out odd half, this in-memory scorer; columns cached):")
    for name in (
        "product (ledger of past tasks' words)",
        "pairs x1 as their weaker word, nothing fitted",
        *COMBOS,
    ):
        if name.startswith("bigrams + BM25"):
            continue
        p = results[name][1][0]
        print(f"  {name:50} {cost(corpus, learnt, halves[1], p):6.2f} ms   ({describe(p)})")


if __name__ == "__main__":
    main()
