"""Tokens and BM25 for the replay benchmark's baselines, mirroring Scarwarden's text pipeline.

A copy of the logic of ``scarwarden/text.py`` (not an import: the benchmark drives
Scarwarden only through its CLI): runs of letters and digits in any script with inner
apostrophes, lower case, the Snowball English stopword list dropped, Snowball English
stems. The BM25 is the term part of Scarwarden's score (Lucene's non-negative idf,
K1 = 1.5, B = 0.75), so the raw-episode and policy baselines rank with the same
tokens and constants as recall, without tags, playbook or router.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from functools import lru_cache

import snowballstemmer

STOPWORDS = frozenset(
    """
i me my myself we our ours ourselves you your yours yourself yourselves he him his
himself she her hers herself it its itself they them their theirs themselves what which
who whom this that these those am is are was were be been being have has had having do
does did doing would should could ought i'm you're he's she's it's we're they're i've
you've we've they've i'd you'd he'd she'd we'd they'd i'll you'll he'll she'll we'll
they'll isn't aren't wasn't weren't hasn't haven't hadn't doesn't don't didn't won't
wouldn't shan't shouldn't can't cannot couldn't mustn't let's that's who's what's here's
there's when's where's why's how's a an the and but if or because as until while of at
by for with about against between into through during before after above below to from
up down in out on off over under again further then once here there when where why how
all any both each few more most other some such no nor not only own same so than too
very
""".split()
)

TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})
_stemmer = snowballstemmer.stemmer("english")
K1, B = 1.5, 0.75


@lru_cache(maxsize=100_000)
def stem(word: str) -> str:
    """The Snowball English stem of one lower-case word."""
    return str(_stemmer.stemWord(word))


def words(text: str) -> list[str]:
    """All lower-case word tokens, stopwords kept (the judge needs "not", "cannot")."""
    return TOKEN.findall(text.translate(_APOSTROPHES).lower())


def stems(text: str) -> list[str]:
    """Scarwarden's stems: stopwords dropped, repeats kept."""
    return [stem(w) for w in words(text) if w not in STOPWORDS]


def tag_stems(tag: str) -> tuple[str, ...]:
    """A tag's stems as Scarwarden matches them: split on '-', stopwords dropped."""
    parts = [p for p in tag.lower().split("-") if p and p not in STOPWORDS]
    return tuple(dict.fromkeys(stem(p) for p in parts))


class BM25:
    """Okapi BM25 over stemmed documents, ranked by score then document order."""

    def __init__(self, docs: list[str]) -> None:
        self.tfs = [Counter(stems(d)) for d in docs]
        self.lengths = [sum(tf.values()) for tf in self.tfs]
        self.avglen = (sum(self.lengths) / len(docs)) if docs else 0.0
        df: Counter[str] = Counter()
        for tf in self.tfs:
            df.update(tf.keys())
        n = len(docs)
        self.idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}

    def scores(self, query: str) -> list[float]:
        """The BM25 score of every document for ``query`` (query term frequency counts)."""
        qtf = Counter(stems(query))
        out = []
        for tf, length in zip(self.tfs, self.lengths):
            norm = K1 * (1 - B + B * length / self.avglen) if self.avglen else K1
            out.append(
                sum(self.idf[t] * q * tf[t] * (K1 + 1) / (tf[t] + norm) for t, q in qtf.items() if t in tf)
            )
        return out

    def top(self, query: str, k: int) -> list[int]:
        """Indices of the best ``k`` documents with a positive score."""
        scored = [(s, i) for i, s in enumerate(self.scores(query)) if s > 0]
        scored.sort(key=lambda p: (-p[0], p[1]))
        return [i for _, i in scored[:k]]
