"""The replay benchmark's judge: does a recalled text hold the lesson? Code, not a model.

A text is split into sentences (on . ; : ! ? and newlines) and words (Scarwarden's
token pattern, lower case, stopwords *kept*, Snowball stems). Every rule below is
written out in docs/replay.md, "How a lesson is judged":

* a sentence *names an action* when it holds all the stems of one of the action's
  word forms (ACTION_FORMS); it is *a refusal* when it also holds a refusal word;
* the text *names an argument* when it holds all the stems of one of the argument's
  word forms (KEY_FORMS), and *holds a value* when the value's words occur in it in
  order (``certificate_7504069`` -> ``certificate 7504069``);
* ``specific`` (lesson at the repeat): the action, named in the lesson's direction (a
  refusal for a write that should not have been made, a non-refusal otherwise), and
  the value that fixes it (the right argument value, or the reservation / flights /
  amount the write is about);
* ``general`` (a task never seen; also reported at the repeat): the action in the lesson's direction and the
  argument involved, or for a write that should not have been made, the refusal.

The word forms come from the tool and argument names and the policy's own wording;
they were written and checked on tasks 0-24 only (the first half), and the figures are
reported on each half separately too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from replay_correction import KEY_ARGS, Item
from replay_text import stem, words

Forms = tuple[tuple[str, ...], ...]

#: Word forms (stems; all of one alternative must be in one sentence) naming each write.
ACTION_FORMS: dict[str, Forms] = {
    "book_reservation": (("book",),),
    "cancel_reservation": (("cancel",),),
    "update_reservation_flights": (
        ("flight", "chang"),
        ("flight", "modifi"),
        ("flight", "updat"),
        ("cabin", "chang"),
        ("cabin", "upgrad"),
        ("cabin", "downgrad"),
        ("cabin", "updat"),
    ),
    "update_reservation_baggages": (
        ("bag", "add"),
        ("bag", "chang"),
        ("bag", "updat"),
        ("baggag", "add"),
        ("baggag", "chang"),
        ("baggag", "updat"),
    ),
    "update_reservation_passengers": (("passeng", "chang"), ("passeng", "modifi"), ("passeng", "updat")),
    "send_certificate": (("certif",),),
}
_PAY: Forms = (("payment",), ("pay",), ("certif",), ("gift",), ("credit",))
_BAGS: Forms = (("bag",), ("baggag",))
#: Word forms naming each argument (anywhere in the text).
KEY_FORMS: dict[str, Forms] = {
    "cabin": (("cabin",), ("busi",), ("economi",)),
    "flights": (("flight",),),
    "payment_methods": _PAY,
    "payment_id": _PAY,
    "total_baggages": _BAGS,
    "nonfree_baggages": _BAGS,
    "passengers": (("passeng",),),
    "insurance": (("insur",),),
    "reservation_id": (("reserv",),),
    "origin": (("origin",),),
    "destination": (("destin",),),
    "flight_type": (("trip",), ("way",)),
    "amount": (("amount",),),
    "user_id": (("user",),),
}
#: Words next to which a weak identifying value (a certificate's amount) counts.
ID_NEAR: Forms = (("amount",), ("certif",))
#: A figure the user asked for: the words that say "a total must be given".
OUTPUT_FORMS: Forms = (("total",), ("sum",), ("calcul",))
OUTPUT_NEAR: Forms = (("tell",), ("total",), ("sum",), ("figur",))
REFUSAL_WORDS = frozenset(
    {
        "not",
        "never",
        "cannot",
        "can't",
        "don't",
        "doesn't",
        "shouldn't",
        "mustn't",
        "won't",
        "isn't",
        "aren't",
    }
)
REFUSAL_STEMS = frozenset({"deni", "refus", "declin", "forbid", "forbidden", "unabl"})
_SENTENCE = re.compile(r"[.;:!?\n]+")


#: Values too common to count alone (small numbers, enumerations): they must sit within
#: VALUE_WINDOW words of a word naming their argument ("nonfree_baggages to 0").
WEAK_WORDS = frozenset(
    {"yes", "no", "true", "false", "economy", "business", "basic", "one", "way", "round", "trip"}
)
VALUE_WINDOW = 3


@dataclass(frozen=True)
class Analysed:
    """A text as the judge reads it."""

    stems: frozenset[str]
    words: tuple[str, ...]
    word_stems: tuple[str, ...]
    sentences: tuple[tuple[frozenset[str], bool], ...]  # (stems, is a refusal)


def analyse(text: str) -> Analysed:
    """Sentences, stems and words of a recalled text."""
    sentences = []
    for part in _SENTENCE.split(text):
        ws = words(part)
        if ws:
            st = frozenset(stem(w) for w in ws)
            sentences.append((st, bool(REFUSAL_WORDS.intersection(ws) or REFUSAL_STEMS & st)))
    all_words = tuple(words(text))
    all_stems = tuple(stem(w) for w in all_words)
    return Analysed(frozenset(all_stems), all_words, all_stems, tuple(sentences))


def names(forms: Forms, stems: frozenset[str]) -> bool:
    """Whether ``stems`` hold every stem of one of the alternatives."""
    return any(all(s in stems for s in alt) for alt in forms)


def says_action(item: Item, text: Analysed) -> bool:
    """A sentence names the item's action in the lesson's direction (refusal or not)."""
    refusal = item.kind in ("extra", "refuse")
    forms = ACTION_FORMS.get(item.action, ())
    return any(names(forms, st) and is_refusal == refusal for st, is_refusal in text.sentences)


def _weak(ws: list[str]) -> bool:
    return all((w.isdigit() and len(w) <= 2) or w in WEAK_WORDS for w in ws)


def holds_value(values: tuple[str, ...], text: Analysed, near: Forms = ()) -> bool:
    """One of ``values`` occurs in the text, its words in order; a weak value (WEAK_WORDS,
    numbers under 100) only next to a word of ``near`` (its argument's forms)."""
    near_stems = {s for alt in near for s in alt}
    for value in values:
        ws = words(value)
        n = len(ws)
        for i in range(len(text.words) - n + 1) if ws else ():
            if list(text.words[i : i + n]) != ws:
                continue
            if not _weak(ws):
                return True
            window = text.word_stems[max(0, i - VALUE_WINDOW) : i + n + VALUE_WINDOW]
            if near_stems.intersection(window):
                return True
    return False


def _keys_for_missing(item: Item) -> tuple[str, ...]:
    keys = KEY_ARGS.get(item.action, ())
    return keys + (("reservation_id",) if item.reservation else ())


def specific(item: Item, text: Analysed) -> bool:
    """The lesson that fixes this very failure, its value included (lesson at the repeat)."""
    if item.kind == "output":
        return holds_value(item.values.get("output", ()), text, OUTPUT_NEAR)
    if not says_action(item, text):
        return False
    if item.kind == "wrong":
        return any(
            names(KEY_FORMS.get(k, ()), text.stems)
            and holds_value(item.values.get(k, ()), text, KEY_FORMS.get(k, ()))
            for k in item.keys
        )
    return holds_value(item.values.get("id", ()), text, ID_NEAR)


def general(item: Item, text: Analysed) -> bool:
    """A lesson of the same kind: the action and argument (or refusal), no values (transfer)."""
    if item.kind == "output":
        return names(OUTPUT_FORMS, text.stems)
    if not says_action(item, text):
        return False
    if item.kind in ("extra", "refuse"):
        return True
    keys = item.keys if item.kind == "wrong" else _keys_for_missing(item)
    return any(names(KEY_FORMS.get(k, ()), text.stems) for k in keys) or not keys


def held(item: Item, texts: list[Analysed], judge: str) -> bool:
    """Whether any of the recalled texts holds the item under ``judge`` (specific/general)."""
    fn = specific if judge == "specific" else general
    return any(fn(item, t) for t in texts)


def tokens(text: str) -> int:
    """Reading cost of a text: characters / 4, rounded up (the same for every system)."""
    return -(-len(text) // 4)
