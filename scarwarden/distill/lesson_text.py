"""What a correction teaches, sentence by sentence, with identifiers masked (issue 25).

The offline distiller never cuts a sentence: a correction is split into whole
sentences (:func:`units`), and each is compared with others by its *content stems*
with identifiers, numbers, dates and amounts masked (:func:`masked`): "Cancel
reservation Z7GOZK" and "Cancel reservation EQ1G6C" teach the same lesson about
different objects. A masked token is any word holding a digit (``HAT078``,
``2024-05-27``, ``$249``, ``gift_card_6276644``), an address (``@``, ``://``) or an
all-capitals code of five or more letters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from scarwarden import text as txt
from scarwarden.files import claims
from scarwarden.files.playbook_sentences import split

_TOKEN = re.compile(r"\S+")
#: A list marker at the start of a line: "- ", "* ", "1. ", "2) ".
_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d{1,3}[.)])\s+")
#: A sentence that qualifies the one before it ("Context: gold member.").
_QUALIFIER = re.compile(r"^(?:context|note|background|details?)\s*:", re.IGNORECASE)
#: Negation (claims' own list): a negated lesson is not the same as an affirmed one.
_NEGATED = re.compile(
    r"\b(?:never|no|not|don't|dont|do not|does not|doesn't|avoid|stop|must not|mustn't|"
    r"should not|shouldn't|cannot|can't|without|refuse|deny|decline)\b",
    re.IGNORECASE,
)


def _masked_word(token: str) -> bool:
    """An identifier (:func:`scarwarden.files.claims.identifier`), a number or an amount."""
    return claims.identifier(token) is not None or any(ch.isdigit() for ch in token)


def masked(sentence: str) -> tuple[str, frozenset[str]]:
    """(the sentence with identifiers, numbers, dates and amounts blanked, its identifiers)."""
    text = _TOKEN.sub(lambda m: " " if _masked_word(m.group(0)) else m.group(0), sentence)
    return text, claims.identifiers(sentence)


@lru_cache(maxsize=65536)
def analyse(sentence: str) -> Unit:
    text, ids = masked(sentence)
    opening = " ".join(text.split()[:3])  # "Never ...", "Do not ...": a prohibition
    return Unit(sentence, frozenset(txt.stems(text)), ids, bool(_NEGATED.search(opening)))


@dataclass(frozen=True)
class Unit:
    """One lesson sentence (with any qualifying sentences after it, e.g. "Context: ...")."""

    text: str
    #: Content stems, identifiers masked.
    stems: frozenset[str]
    #: The identifiers it names (what object it is about).
    ids: frozenset[str]
    #: It opens with a negation: a prohibition ("Never ...", "Do not ...").
    negated: bool


def units(correction: str) -> list[Unit]:
    """A correction's sentences, each whole; a qualifying sentence ("Context: ...")
    rides with the one before it. Sentences without a word of content are left out."""
    pieces: list[str] = []
    for line in correction.splitlines():
        line = _BULLET.sub("", line)
        for sentence in split(line):
            if not any(ch.isalpha() for ch in sentence):
                continue
            sentence = claims.as_sentence(sentence)
            if pieces and _QUALIFIER.match(sentence):
                pieces[-1] = f"{pieces[-1]} {sentence}"
            else:
                pieces.append(sentence)
    return [analyse(piece) for piece in pieces]


def subject(unit: Unit) -> str | None:
    """The object a sentence is about: the first identifier it names ("Do not call
    cancel_reservation on reservation UDMOP1 (..., payment_id gift_card_1)": ``udmop1``),
    or ``None`` for a sentence that names none (a general lesson)."""
    for token in _TOKEN.findall(unit.text):
        found = claims.identifier(token)
        if found:
            return found
    return None


@lru_cache(maxsize=65536)
def lead(unit: Unit) -> Unit:
    """The unit's first sentence alone (what groups it: the qualifier is detail)."""
    first = split(unit.text)[0]
    return unit if first == unit.text else analyse(first)


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard overlap of two stem sets."""
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def tokens(text: str) -> int:
    """A reading-cost estimate: characters / 4, rounded up."""
    return -(-len(text) // 4)
