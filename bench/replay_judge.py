"""The replay benchmark's judge: does a recalled text hold the lesson? Code, not a model.

A text is split into sentences (a full stop, ! or ? followed by a space or the end, and
newlines; ``:`` and ``;`` join clauses of one sentence) and words (Scarwarden's token
pattern, lower case, stopwords *kept*, Snowball stems). Every rule below is written out
in docs/replay.md, "How a lesson is judged":

* a sentence *names an action* when it holds all the stems of one of the action's
  word forms (ACTION_FORMS); it *refuses* that action when a refusal word stands at
  most REFUSAL_REACH words before one of the action form's words (the negation governs
  the action: "do not call cancel_reservation", not "cancel it, do not wait");
* a sentence *names an argument* when it holds all the stems of one of the argument's
  word forms (KEY_FORMS), and *holds a value* when the value's words occur in it in
  order (``certificate_7504069`` -> ``certificate 7504069``);
* ``specific`` (lesson at the repeat): one sentence names the action in the lesson's
  direction (refused for a write that should not have been made, not refused
  otherwise) and holds the value that fixes it (the right argument value, with its
  argument named, or the reservation / flights / amount the write is about): a value
  elsewhere in the text does not count;
* ``general`` (a task never seen; also reported at the repeat): the action in the
  lesson's direction and the argument involved in that sentence, or for a write that
  should not have been made, the refusal.

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
#: A refusal word governs an action word at most this many words after it ("do not
#: call update_reservation_flights": 2; "should not have been cancelled": 3).
REFUSAL_REACH = 3
_SENTENCE = re.compile(r"[.!?]+(?=\s|$)|\n+")


#: Values too common to count alone (small numbers, enumerations): they must sit within
#: VALUE_WINDOW words of a word naming their argument ("nonfree_baggages to 0").
WEAK_WORDS = frozenset(
    {"yes", "no", "true", "false", "economy", "business", "basic", "one", "way", "round", "trip"}
)
VALUE_WINDOW = 3


@dataclass(frozen=True)
class Sentence:
    """One sentence as the judge reads it: its words, their stems, the set of stems."""

    stems: frozenset[str]
    words: tuple[str, ...]
    word_stems: tuple[str, ...]

    def refuses(self, forms: Forms) -> bool:
        """Whether a refusal word governs a word of the named action form: it stands at
        most REFUSAL_REACH words before it."""
        targets = {s for alt in forms if all(x in self.stems for x in alt) for s in alt}
        for i, (w, st) in enumerate(zip(self.words, self.word_stems)):
            if w in REFUSAL_WORDS or st in REFUSAL_STEMS:
                if targets.intersection(self.word_stems[i + 1 : i + 1 + REFUSAL_REACH]):
                    return True
        return False


@dataclass(frozen=True)
class Analysed:
    """A text as the judge reads it."""

    stems: frozenset[str]
    words: tuple[str, ...]
    word_stems: tuple[str, ...]
    sentences: tuple[Sentence, ...]


def _sentence(part: str) -> Sentence:
    ws = tuple(words(part))
    st = tuple(stem(w) for w in ws)
    return Sentence(frozenset(st), ws, st)


def analyse(text: str) -> Analysed:
    """Sentences, stems and words of a recalled text."""
    sentences = tuple(s for s in (_sentence(p) for p in _SENTENCE.split(text)) if s.words)
    whole = _sentence(text)
    return Analysed(whole.stems, whole.words, whole.word_stems, sentences)


def names(forms: Forms, stems: frozenset[str]) -> bool:
    """Whether ``stems`` hold every stem of one of the alternatives."""
    return any(all(s in stems for s in alt) for alt in forms)


def action_sentences(item: Item, text: Analysed) -> list[Sentence]:
    """The sentences naming the item's action in the lesson's direction (refused or not)."""
    refusal = item.kind in ("extra", "refuse")
    forms = ACTION_FORMS.get(item.action, ())
    return [s for s in text.sentences if names(forms, s.stems) and s.refuses(forms) == refusal]


def says_action(item: Item, text: Analysed) -> bool:
    """A sentence names the item's action in the lesson's direction (refusal or not)."""
    return bool(action_sentences(item, text))


def _weak(ws: list[str]) -> bool:
    return all((w.isdigit() and len(w) <= 2) or w in WEAK_WORDS for w in ws)


def holds_value(values: tuple[str, ...], text: Analysed | Sentence, near: Forms = ()) -> bool:
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
    for sentence in action_sentences(item, text):
        if item.kind == "wrong":
            if any(
                names(KEY_FORMS.get(k, ()), sentence.stems)
                and holds_value(item.values.get(k, ()), sentence, KEY_FORMS.get(k, ()))
                for k in item.keys
            ):
                return True
        elif holds_value(item.values.get("id", ()), sentence, ID_NEAR):
            return True
    return False


def general(item: Item, text: Analysed) -> bool:
    """A lesson of the same kind: the action and argument (or refusal), no values (transfer)."""
    if item.kind == "output":
        return names(OUTPUT_FORMS, text.stems)
    sentences = action_sentences(item, text)
    if not sentences or item.kind in ("extra", "refuse"):
        return bool(sentences)
    keys = item.keys if item.kind == "wrong" else _keys_for_missing(item)
    return not keys or any(names(KEY_FORMS.get(k, ()), s.stems) for s in sentences for k in keys)


def held(item: Item, texts: list[Analysed], judge: str) -> bool:
    """Whether any of the recalled texts holds the item under ``judge`` (specific/general)."""
    fn = specific if judge == "specific" else general
    return any(fn(item, t) for t in texts)


def tokens(text: str) -> int:
    """Reading cost of a text: characters / 4, rounded up (the same for every system)."""
    return -(-len(text) // 4)
