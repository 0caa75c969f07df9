"""Tokens and BM25 for the replay benchmark's baselines, on Scarwarden's own text pipeline.

The tokens are ``scarwarden.text``'s (imported, so the baselines can never drift from
recall; the benchmark still drives memory itself only through the CLI): runs of letters
and digits in any script with inner apostrophes, lower case, the Snowball English
stopword list dropped, Snowball English stems. The BM25 is the term part of Scarwarden's
score (Lucene's non-negative idf,
K1 = 1.5, B = 0.75), so the raw-episode and policy baselines rank with the same
tokens and constants as recall, without tags, playbook or router.
"""

from __future__ import annotations

import math
from collections import Counter

from scarwarden.text import STOPWORDS, stem, stems, tag_stems, words

__all__ = ["B", "BM25", "K1", "STOPWORDS", "stem", "stems", "tag_stems", "words"]

K1, B = 1.5, 0.75


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
