"""Inline citations in answers, and their verification by code (SPEC section 5).

An answer that applies a rule cites it inline, exactly so::

    [PB-03, learnt in ep-7k2m9q4x1z, ep-2b8d0c1a9f]

Models drift from the exact format, so the parser tolerates the variants a reader
would accept: ``[PB-03]``, extra spaces, ``learned in``/``learnt in:``, ``;`` or
``and`` between episodes, lower-case IDs, ``PB-3`` for ``PB-03``, and several rules in
one bracket (``[PB-01, learnt in ep-a; PB-02, learnt in ep-b]``). A bracket counts as
a citation only when its first word is a rule ID, so markdown links and other bracketed
prose are left alone.

Verification never trusts the model: a cited rule must have been recalled for this
task, and every cited episode must be among that rule's own citations. Anything else is
*invented*, with the reason. Recalled rules the answer did not cite are reported too.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from scarwarden.answers.cite_as import format_citation as format_citation  # the form, re-exported
from scarwarden.files.rule_ids import CROCKFORD, LOOSE_RULE_ID_RE, MINTED_LENGTH, normalise

if TYPE_CHECKING:  # pragma: no cover
    from scarwarden.repo import MemoryRepo

# A bracket whose content starts with a rule ID; nested brackets are not citations.
_BRACKET_RE = re.compile(rf"\[\s*(PB-(?:\d+|[{CROCKFORD}]{{{MINTED_LENGTH}}})\b[^\[\]]*)\]", re.IGNORECASE)
_RULE_RE = LOOSE_RULE_ID_RE
# Any "ep-..." word inside a citation is a cited episode, even one too short or too long
# to be a real ID ("ep-xx"): it is then checked like any other and reported as invented,
# never passed over as filler.
_EPISODE_RE = re.compile(r"\bep-[0-9a-z][0-9a-z-]*", re.IGNORECASE)
# What may sit between the IDs of a citation without making it malformed.
_FILLER_RE = re.compile(r"(?:\blearn(?:t|ed)\s+(?:in|from)\b|\band\b|[\s,;:.&/])+", re.IGNORECASE)

# Characters a reader takes for a citation's own, each read as that one (one for one,
# so offsets hold): a citation written with them was no citation at all, and an
# invented one passed --strict. Dashes, fullwidth forms, the lenticular brackets some
# models write, zero-width characters (as spaces), Cyrillic and Greek twins of letters.
_LOOKALIKES = str.maketrans(
    {
        **{c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63"},
        **{chr(c): chr(c - 0xFEE0) for c in range(0xFF01, 0xFF5F)},
        **{c: " " for c in "\u200b\u200c\u200d\u2060\ufeff\u00ad"},
        "\u3010": "[",
        "\u3011": "]",
        **dict(
            zip(
                "\u0420\u0412\u0430\u0441\u0435\u043e\u0440\u0445\u0443\u0391\u0392\u03a1\u03bf",
                "PBaceopxyABPo",
                strict=True,
            )
        ),
    }
)

#: Reasons a citation is invented (stable strings, used in ``--json``).
UNKNOWN_RULE = "unknown-rule"
RETIRED_RULE = "retired-rule"
NOT_RECALLED = "not-recalled"
EPISODE_NOT_IN_RULE = "episode-not-in-rule"


class _RuleLike(Protocol):
    id: str
    title: str
    episode_ids: Sequence[str]


class _RecallLike(Protocol):
    @property
    def rules(self) -> Sequence[Any]: ...


@dataclass(frozen=True)
class Citation:
    """One rule cited inline, with the episodes cited for it (as written, normalised)."""

    rule_id: str
    episode_ids: tuple[str, ...]
    raw: str
    start: int
    end: int
    #: Words inside the bracket that are neither IDs nor the expected filler.
    stray: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "rule_id": self.rule_id,
            "episode_ids": list(self.episode_ids),
            "text": self.raw,
            "offset": self.start,
            "unparsed": self.stray,
        }


@dataclass(frozen=True)
class Invented:
    """A citation (or one episode of it) that code could not verify."""

    rule_id: str
    episode_id: str | None
    kind: str
    reason: str
    text: str

    def to_json(self) -> dict[str, Any]:
        return {
            "rule_id": self.rule_id,
            "episode_id": self.episode_id,
            "kind": self.kind,
            "reason": self.reason,
            "text": self.text,
        }


@dataclass
class Verification:
    """The result of checking every inline citation of one answer."""

    citations: list[Citation] = field(default_factory=list)
    verified: list[Citation] = field(default_factory=list)
    invented: list[Invented] = field(default_factory=list)
    #: Recalled rule IDs the answer did not cite, in recall order.
    uncited: list[str] = field(default_factory=list)
    #: Verified citations that name no episode (the spec format lists them).
    incomplete: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no citation is invented (uncited rules are a warning, not a failure)."""
        return not self.invented

    @property
    def cited_rule_ids(self) -> list[str]:
        """Rule IDs with at least one verified citation, first-cited first."""
        return list(dict.fromkeys(c.rule_id for c in self.verified))

    @property
    def summary(self) -> str:
        """One line: what verified, what is invented and why, what was not cited."""
        if not self.citations:
            head = "no citations in the answer"
        else:
            ids = self.cited_rule_ids
            head = f"{len(self.verified)} of {len(self.citations)} citation(s) verified" + (
                f" ({', '.join(ids)})" if ids else ""
            )
        parts = [head]
        if self.invented:
            reasons = "; ".join(
                f"{i.rule_id}{' ' + i.episode_id if i.episode_id else ''}: {i.reason}" for i in self.invented
            )
            parts.append(f"{len(self.invented)} invented ({reasons})")
        if self.incomplete:
            parts.append(f"cited without episodes: {', '.join(self.incomplete)}")
        if self.uncited:
            parts.append(f"recalled but not cited: {', '.join(self.uncited)}")
        return "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "summary": self.summary,
            "verified": [c.to_json() for c in self.verified],
            "invented": [i.to_json() for i in self.invented],
            "uncited": list(self.uncited),
            "incomplete": list(self.incomplete),
            "cited_rule_ids": self.cited_rule_ids,
        }


def _rule_id(suffix: str) -> str:
    # "PB-3" is read as the reader would: PB-03; "PB-7K2M9Q4X" as PB-7k2m9q4x.
    return normalise(suffix)


def parse_citations(text: str) -> list[Citation]:
    """Every inline citation in ``text``, in order of appearance.

    A bracket naming several rules yields one citation per rule; the episodes that
    follow a rule ID (up to the next rule ID) belong to it.
    """
    found: list[Citation] = []
    for match in _BRACKET_RE.finditer(text.translate(_LOOKALIKES)):
        body = match.group(1)
        raw = text[match.start() : match.end()]  # as written
        rule_matches = list(_RULE_RE.finditer(body))
        for n, rule_match in enumerate(rule_matches):
            segment_end = rule_matches[n + 1].start() if n + 1 < len(rule_matches) else len(body)
            segment = body[rule_match.end() : segment_end]
            episodes = tuple(dict.fromkeys(e.lower() for e in _EPISODE_RE.findall(segment)))
            leftover = _FILLER_RE.sub(" ", _EPISODE_RE.sub(" ", segment)).strip()
            found.append(
                Citation(_rule_id(rule_match.group(1)), episodes, raw, match.start(), match.end(), leftover)
            )
    return found


def verify_citations(
    text: str,
    recall_result: _RecallLike,
    *,
    known_rule_ids: Collection[str] | None = None,
    retired_rule_ids: Collection[str] = (),
) -> Verification:
    """Check every citation in ``text`` against what was recalled for the task.

    ``recall_result.rules`` are the rules recalled for this task (each with ``id``,
    ``title``, ``episode_ids``). ``known_rule_ids`` (every active rule in the playbook)
    and ``retired_rule_ids`` only sharpen the reason given for a rule that was not
    recalled; without them such a rule is reported as not recalled.
    """
    recalled = {rule.id: rule for rule in recall_result.rules}
    result = Verification(citations=parse_citations(text))
    for citation in result.citations:
        rule = recalled.get(citation.rule_id)
        if rule is None:
            result.invented.append(_not_recalled(citation, known_rule_ids, retired_rule_ids))
            continue
        own = set(rule.episode_ids)
        bad = [ep for ep in citation.episode_ids if ep not in own]
        for ep in bad:
            result.invented.append(
                Invented(
                    citation.rule_id,
                    ep,
                    EPISODE_NOT_IN_RULE,
                    f"{ep} is not among {citation.rule_id}'s citations ({', '.join(rule.episode_ids)})",
                    citation.raw,
                )
            )
        if not bad:
            result.verified.append(citation)
            if not citation.episode_ids and citation.rule_id not in result.incomplete:
                result.incomplete.append(citation.rule_id)
    cited = {c.rule_id for c in result.citations}
    result.uncited = [rule_id for rule_id in recalled if rule_id not in cited]
    return result


def verify_in_repo(repo: MemoryRepo, text: str, recall_result: _RecallLike) -> Verification:
    """:func:`verify_citations` against ``repo``'s playbook, so a rule that was not
    recalled is named for what it is: unknown, retired, or merely not recalled.

    The one place answers, ``review-draft``, the task page and the MCP tool verify
    an answer's citations.
    """
    from scarwarden.index import open_index

    with open_index(repo) as index:
        rules = index.rules(include_retired=True)
    return verify_citations(
        text,
        recall_result,
        known_rule_ids={r.id for r in rules if not r.retired},
        retired_rule_ids={r.id for r in rules if r.retired},
    )


def _not_recalled(citation: Citation, known: Collection[str] | None, retired: Collection[str]) -> Invented:
    rid = citation.rule_id
    if rid in retired:
        return Invented(
            rid, None, RETIRED_RULE, "retired from the playbook; it cannot be applied", citation.raw
        )
    if known is not None and rid not in known:
        return Invented(rid, None, UNKNOWN_RULE, "no such rule in the playbook", citation.raw)
    return Invented(rid, None, NOT_RECALLED, "not recalled for this task", citation.raw)
