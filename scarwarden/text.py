"""The text pipeline shared by rules, tags and tasks.

Unicode-aware tokenisation, lower-casing, the Snowball English stopword list and
Snowball English stemming, so "announcing", "announced" and "announcement" meet.
``snowballstemmer`` uses PyStemmer's C code when it is installed (30-45x faster).
Stems are memoised per word: a playbook repeats its vocabulary a lot.
"""

from __future__ import annotations

import re
from functools import lru_cache

import snowballstemmer

# The Snowball English stop word list (snowballstem.org/algorithms/english/stop.txt).
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

# Letters and digits (any script), optionally joined by apostrophes: "reader's", "don't".
_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})

_stemmer = snowballstemmer.stemmer("english")


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """The Snowball English stem of one lower-case word."""
    return str(_stemmer.stemWord(word))


def words(text: str) -> list[str]:
    """Every lower-cased word token, stopwords kept (a judge of text needs "not")."""
    return _TOKEN.findall(text.translate(_APOSTROPHES).lower())


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens with stopwords removed."""
    return [t for t in words(text) if t not in STOPWORDS]


def stems(text: str) -> list[str]:
    """Stemmed tokens, in order, repeats kept (term frequencies need them)."""
    return [stem(t) for t in tokens(text)]


@lru_cache(maxsize=20_000)
def tag_stems(tag: str) -> tuple[str, ...]:
    """A tag's normalised form: split on '-', stopwords dropped, each part stemmed.

    ``feature-flag`` -> ``("featur", "flag")``, which matches a task containing both
    stems ("flag the new feature"); ``featureflag`` stays one stem and does not.
    """
    parts = [p for p in tag.lower().split("-") if p and p not in STOPWORDS]
    return tuple(dict.fromkeys(stem(p) for p in parts))


def pairs(stems: list[str]) -> list[str]:
    """Adjacent stems as ``"a b"``, in order, repeats kept: ``["custom", "refund",
    "card"]`` -> ``["custom refund", "refund card"]``. Recall (version 3) scores a task's
    pairs against the pairs of each rule's title and of its text, so "credit card fee"
    ranks a rule saying *credit card* above one that says *credit* and *card* apart."""
    return [f"{a} {b}" for a, b in zip(stems, stems[1:], strict=False)]


@lru_cache(maxsize=1 << 16)
def flat_words(text: str) -> str:
    """``text`` single-spaced and in lower case: how distill finds an add that says an
    active rule's text word for word (it compares each add with every rule: memoised)."""
    return " ".join(text.split()).lower()
