"""What a sentence claims, and when two sentences contradict each other.

The offline distiller, the gate's ``check --all`` and ``review`` all ask the same
question: does this correction contradict this rule? The answer here is deterministic
and deliberately narrow; it finds the clear cases and says "unsure" rather than guess:

* **a different limit** on the same thing: "One emoji at most" against "No emoji at
  all" (``emoji``: 1 against 0), "at most 3 hashtags" against "two hashtags";
* **opposite polarity** on the same thing: what one clause affirms the other negates
  (the words after "never", "no", "don't", "avoid"...): "Never post on Fridays"
  against "Always post on Fridays", "Put hashtags at the end" against "Don't put
  hashtags at the end".

Sentences are compared clause by clause (split at ``,``, ``;`` and sentence ends), on their
content stems (:mod:`scarwarden.text`). When two clauses limit the same noun the limits
decide (equal limits never contradict, whatever the wording: "Never more than one
emoji" says what "One emoji at most" says). A clear contradiction needs most of the
smaller clause's content in the other one; a weaker overlap, or a rule that states its
own exceptions ("unless", "except"), is reported as ``unsure``, for a human to decide.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from scarwarden import text as txt

NUMBER_WORDS = {
    "no": 0,
    "zero": 0,
    "one": 1,
    "single": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}
#: Words that carry no subject of their own: a clause about "keep" and "use" is not
#: about the same thing as another clause about "keep" and "use".
GENERIC = frozenset(
    txt.stem(w)
    for w in (
        "keep use add include put make write give have get limit max maximum least most always "
        "never avoid stop must ever only every all time"
    ).split()
) | frozenset(NUMBER_WORDS)
#: Where a negation starts: what follows it in the clause is negated ("Support never
#: deletes accounts": ``accounts`` negated, ``support`` affirmed) up to the next "and",
#: "but", "then"... A bare "not" is left
#: out on purpose: "the whole message, not just the subject" qualifies, it does not negate.
_NEGATION = re.compile(
    r"\b(?:never|no|don't|dont|do not|does not|doesn't|avoid|stop|must not|mustn't|"
    r"should not|shouldn't|cannot|can't|without)\b"
)
#: Where a negation's scope ends: the next coordinated clause.
_SCOPE_END = re.compile(r"\b(?:and|but|then|so|because|instead)\b")
_HEDGES = re.compile(r"\b(?:unless|except|otherwise)\b")
_WORD = re.compile(r"[a-z0-9']+")
_CLAUSES = re.compile(r"(?<=[.!?;,])\s+|[;,]\s*")


_TOKEN = re.compile(r"\S+")
_EDGE = "()[]{}<>,;:.!?\"'`*"
#: An all-capitals code of five or more letters (a booking reference: ``IFOYYZ``).
_CODE = re.compile(r"^[A-Z]{5,}$")
#: A word that never ends a limit ("set it to 0 instead of 1" limits nothing).
_NOT_A_NOUN = frozenset({"instead", "than", "per", "each", "times", "x"})


def identifier(token: str) -> str | None:
    """The identifier a word is, lower case, or ``None``: a word mixing digits with
    letters or ``_``/``-`` (``gift_card_6276644``, ``HAT078``, ``2024-05-27``), an
    address (``@``, ``://``), an all-capitals code of five letters or more. A bare
    number ("3 hashtags") is a quantity, not a name."""
    core = token.strip(_EDGE)
    if _CODE.match(core):
        return core.lower()
    if not core or not any(ch.isdigit() for ch in core) and "@" not in core and "://" not in core:
        return None
    if core.replace(",", "").replace(".", "").isdigit() or core.startswith(("$", "€", "£")):
        return None
    return core.lower()


@lru_cache(maxsize=65536)
def _figures(text: str) -> frozenset[str]:
    """The bare numbers of a text ("3 bags", "$249")."""
    return frozenset(t.strip(_EDGE) for t in _TOKEN.findall(text) if t.strip(_EDGE + "$€£").isdigit())


@lru_cache(maxsize=65536)
def identifiers(text: str) -> frozenset[str]:
    """The identifiers a text names (what object it is about)."""
    return frozenset(i for i in (identifier(t) for t in _TOKEN.findall(text)) if i)


def without_identifiers(text: str) -> str:
    """``text`` with its identifiers blanked: a number inside one is never a limit."""
    return _TOKEN.sub(lambda m: " " if identifier(m.group(0)) else m.group(0), text)


def clean(text: str) -> str:
    return " ".join(str(text or "").split()).replace("\u2019", "'")


def sentences(text: str) -> list[str]:
    """A rule's text as sentences (``.``, ``!`` or ``?`` followed by a space)."""
    return [s for s in re.split(r"(?<=[.!?])\s+", clean(text)) if s]


def as_sentence(text: str) -> str:
    """A correction as a sentence of rule text: one line, capitalised, ending with a stop."""
    s = clean(text).strip()
    if s and s[-1] not in ".!?":
        s += "."
    return s[:1].upper() + s[1:]


@dataclass(frozen=True)
class Clause:
    text: str
    #: Content stems before a negation (affirmed) and after it (negated).
    affirmed: frozenset[str]
    negated: frozenset[str]
    #: Limited noun stem -> the number allowed ("one emoji": {"emoji": 1}).
    limits: dict[str, int]
    #: Content stems, without the generic words.
    content: frozenset[str]
    hedged: bool
    #: Stem -> the first word seen with it, for reports a reader understands.
    surface: dict[str, str]
    #: It holds a word of LIMIT_CUES: its numbers are limits, not facts of one case.
    cued: bool = False

    def say(self, stems: Iterable[str]) -> str:
        return ", ".join(self.surface.get(s, s) for s in sorted(stems))


#: Words that make a number in a clause a limit or a setting ("at most 2", "no emoji",
#: "within 24 hours", "2 hours before"); when neither clause has one, their numbers are
#: facts of two cases ("a dispute with 75 transactions"), and no contradiction.
LIMIT_CUES = frozenset(
    "most least max maximum minimum min more less fewer under over within exactly only up "
    "no zero limit cap before after every per".split()
)


def _limits(words: list[str]) -> dict[str, int]:
    found: dict[str, int | None] = {}
    for i, word in enumerate(words[:-1]):
        value = int(word) if word.isdigit() else NUMBER_WORDS.get(word)
        if value is None:
            continue
        nxt = words[i + 1]
        if nxt in ("more", "less", "fewer") or nxt in txt.STOPWORDS or nxt.isdigit() or nxt in _NOT_A_NOUN:
            continue
        if txt.stem(nxt) in GENERIC:  # "lesson 8: always ...": no noun follows the number
            continue  # "no more than three", "one of": the number is elsewhere
        run = [nxt]  # "one concrete benefit": the noun ends the phrase
        for word in words[i + 2 : i + 4]:
            if word in txt.STOPWORDS or word.isdigit() or word in NUMBER_WORDS:
                break
            run.append(word)
        noun = txt.stem(run[-1])
        found[noun] = value if found.get(noun, value) == value else None  # two values: ambiguous
    return {noun: v for noun, v in found.items() if v is not None}


def _content(text: str) -> frozenset[str]:
    return frozenset(s for s in txt.stems(text) if s not in GENERIC and not s.isdigit())


def clause(text: str) -> Clause:
    lowered = clean(text).lower()
    words = _WORD.findall(lowered)
    surface: dict[str, str] = {}
    for token in txt.tokens(lowered):
        surface.setdefault(txt.stem(token), token)
    negation = _NEGATION.search(lowered)
    start = negation.start() if negation else len(lowered)
    end_match = _SCOPE_END.search(lowered, negation.end()) if negation else None
    end = end_match.start() if end_match else len(lowered)
    # Before a "never"/"not" inside a clause stands its subject ("Support never deletes
    # accounts", "email is never a page"), not something the clause asks for; before a
    # "without" stands an instruction ("Promote the sale without the code").
    before = lowered[:start] if negation is None or negation.group(0) == "without" else ""
    return Clause(
        text,
        _content(before + " " + lowered[end:]),
        _content(lowered[start:end]),
        _limits(words),
        _content(lowered),
        bool(_HEDGES.search(lowered)),
        surface,
        bool(LIMIT_CUES.intersection(words)),
    )


#: A clause that states a condition ("if no source exists") is not an instruction.
_CONDITION = re.compile(r"^\W*(?:if|when|whenever|unless|until|once)\b", re.IGNORECASE)


def clauses(text: str) -> list[Clause]:
    return list(_clauses(text))


@lru_cache(maxsize=65536)
def _clauses(text: str) -> tuple[Clause, ...]:
    """Parsed once per text: the distiller compares one rule with many corrections."""
    parts = _CLAUSES.split(clean(without_identifiers(text)))
    return tuple(clause(part) for part in parts if part.strip() and not _CONDITION.match(part))


@dataclass(frozen=True)
class Contradiction:
    strength: str  # "clear" or "unsure"
    reason: str  # "a different limit on emoji (1 against 0)"
    old: str  # the clause contradicted
    new: str  # the clause contradicting it

    @property
    def clear(self) -> bool:
        return self.strength == "clear"


def _compare(old: Clause, new: Clause, same_thing: bool = True) -> Contradiction | None:
    shared_limits = sorted(set(old.limits) & set(new.limits)) if old.cued or new.cued else []
    if shared_limits:
        for noun in shared_limits:
            if old.limits[noun] != new.limits[noun]:
                context_old, context_new = old.content - {noun}, new.content - {noun}
                # The same unit is not the same subject ("24 hours" to acknowledge a request,
                # "4 hours" to answer a dispute): the rest must be shared too, or absent.
                related = not context_old or not context_new or len(context_old & context_new) >= 2
                why = (
                    f"a different limit on {new.say([noun])} ({old.limits[noun]} against {new.limits[noun]})"
                )
                strength = "clear" if related and not old.hedged else "unsure"
                return Contradiction(strength, why, old.text, new.text)
        return None  # the same limits: whatever the wording, no contradiction
    if not same_thing:
        return None  # "do not call X with A" and "call X with B": two lessons
    found = _opposite(old.affirmed, new.negated) or _opposite(new.affirmed, old.negated)
    if found is None:
        return None
    strength, shared = found
    why = f"opposite polarity on {new.say(shared)}"
    return Contradiction("unsure" if old.hedged else strength, why, old.text, new.text)


def _opposite(said: frozenset[str], denied: frozenset[str]) -> tuple[str, frozenset[str]] | None:
    """One clause affirms what the other negates. "clear" when the smaller side is all
    shared (two stems at least, or the same single thing): "Never post the recap on
    Fridays" / "Post the recap on Fridays". "unsure" when all that is denied is said
    among other things ("Never use emoji" / "Use emoji sparingly"). Most of both sides
    shared is not enough (issue 25: another object in the same context). Sharing only
    the context ("mention", "messages") is not enough either:
    "Never mention the budget" does not contradict "Mention the date"."""
    shared = said & denied
    if not shared:
        return None
    small = min(len(said), len(denied))
    if said == denied or (len(shared) >= 2 and len(shared) == small):
        return "clear", shared
    if shared == denied:  # issue 25: "most of both" was not the same object
        return "unsure", shared
    return None


def contradiction(old_text: str, new_text: str) -> Contradiction | None:
    """How ``new_text`` contradicts ``old_text``, if it does (clear cases first). Two
    texts naming different objects (identifiers, none shared) never contradict: "Do not
    cancel reservation A" and "Cancel reservation B" are two lessons; opposite polarity
    needs all the identifiers and figures of both to be the same."""
    old_ids, new_ids = identifiers(old_text), identifiers(new_text)
    if old_ids and new_ids and not old_ids & new_ids:
        return None
    # Opposite polarity needs the same thing: the same identifiers and figures, all of them.
    same_thing = old_ids | _figures(old_text) == new_ids | _figures(new_text)
    found: Contradiction | None = None
    for a in _clauses(old_text):
        for b in _clauses(new_text):
            c = _compare(a, b, same_thing)
            if c is not None and (found is None or (c.clear and not found.clear)):
                found = c
    return found


def without(sentence: str, part: str) -> str:
    """``sentence`` with the clause ``part`` cut out, punctuation tidied; "" if nothing
    of substance is left."""
    core = part.strip().rstrip(".!?;,").strip()
    rest = sentence.replace(core, "", 1) if core else sentence
    rest = re.sub(r"\s*[,;]\s*(?=[,;.!?]|$)", "", rest)
    rest = re.sub(r"^\W+", "", rest).strip()
    if not any(ch.isalpha() for ch in rest):
        return ""
    return as_sentence(rest)


def covered(sentence: str, text: str, share: float = 0.8) -> bool:
    """Whether ``text`` already says ``sentence``: that share of its stems is in it."""
    terms = set(txt.stems(sentence))
    if not terms:
        return True
    return len(terms & set(txt.stems(text))) / len(terms) >= share
