"""The playbook: ``memory/playbook.md``, parsed and rendered.

Format (SPEC section 4)::

    # Playbook

    ## PB-01: Lead LinkedIn posts with the reader's pain

    Open with a pain-point hook, not the product.

    - Tags: linkedin, post, hook
    - Learnt in: ep-7k2m9q4x1z, ep-3f9a2c8k1m
    - Sentences from: 1: ep-7k2m9q4x1z

    ## Retired

    ### PB-04: Old title

    Old text.

    - Tags: a, b
    - Learnt in: ep-...
    - Retired: why it went
    - Replaced by: PB-07

A canonical file round-trips byte for byte: ``render(parse(text)) == text``. Every
parse error names its line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from scarwarden.errors import ValidationError
from scarwarden.files import playbook_sentences as sentences
from scarwarden.files.episode_fields import EPISODE_ID_RE, tag_problem
from scarwarden.files.input_policy import text_problem
from scarwarden.files.playbook_model import (
    APPLIES_TO,
    FIELD_RE,
    HEADING_RE,
    RETIRED_HEADING,
    TITLE,
    Playbook,
    Rule,
)
from scarwarden.files.playbook_parse import Section, parse, parse_changed

__all__ = [
    "HEADING_RE",
    "RETIRED_HEADING",
    "TITLE",
    "Playbook",
    "Rule",
    "Section",
    "empty",
    "make_rule",
    "parse",
    "parse_changed",
    "render",
    "render_added",
]


def _render_rule(rule: Rule, level: str) -> list[str]:
    out = [f"{level} {rule.id}: {rule.title}", "", rule.text.strip("\n"), ""]
    out.append(f"- Tags: {', '.join(rule.tags)}".rstrip())
    out.append(f"- Learnt in: {', '.join(rule.episode_ids)}")
    if rule.sources:
        out.append(f"- Sentences from: {sentences.render(rule.sources)}")
    if rule.applies_to:
        out.append(f"- Applies to: {', '.join(rule.applies_to)}")
    if rule.retired:
        out.append(f"- Retired: {rule.reason}")
        if rule.replaced_by:
            out.append(f"- Replaced by: {rule.replaced_by}")
    return out


def render(playbook: Playbook) -> str:
    """The canonical text of a playbook."""
    blocks: list[list[str]] = [[TITLE]]
    if playbook.preamble.strip():
        blocks.append([playbook.preamble.strip("\n")])
    for rule in playbook.rules:
        blocks.append(_render_rule(rule, "##"))
    if playbook.retired:
        blocks.append([RETIRED_HEADING])
        for rule in playbook.retired:
            blocks.append(_render_rule(rule, "###"))
    return "\n\n".join("\n".join(block) for block in blocks) + "\n"


#: A line the parser reads as the start of a merge conflict (playbook_parse's
#: ``_CONFLICT_START``): in a rule's text it would make the whole playbook unparseable.
_CONFLICT_LINE = re.compile(r"^<{7}(?: |$)")
#: A line of a file read with its own line endings, split where universal newlines
#: (how :func:`parse` is given the file) split it: after LF, CRLF or a lone CR.
_LINE_END = re.compile(r"(?<=\n)|(?<=\r)(?!\n)")


def render_added(text: str, rule: Rule) -> str:
    """``text`` (a playbook file as it is, its line endings kept) with the active ``rule``
    added where :func:`render` puts it, after the last active rule (before '## Retired'),
    and every other character kept: a CRLF file stays CRLF, hand spacing stays, and the
    diff a reviewer reads holds the new rule's lines only."""
    lines = _LINE_END.split(text)
    first = lines[0]
    newline = first[len(first.rstrip("\r\n")) :] or "\n"
    block = newline.join(_render_rule(rule, "##")) + newline
    offset = 0
    before = ""  # the line before the place of the new rule
    for line in lines:
        if line[:1] == "#" and line.rstrip() == RETIRED_HEADING:
            break
        offset += len(line)
        before = line or before  # split's last piece is "" after a final line ending
    if before and before[-1:] not in "\r\n":
        block = newline + block  # a last line without its line ending
    if before.strip():
        block = newline + block  # a blank line between the rules
    if offset < len(text):
        block += newline  # and between the new rule and '## Retired'
    return text[:offset] + block + text[offset:]


def empty() -> Playbook:
    return Playbook()


def make_rule(
    rule_id: str,
    title: str,
    text: str,
    tags: Iterable[str],
    episode_ids: Iterable[str],
    *,
    applies_to: Iterable[str] = (),
    sources: Iterable[sentences.Source] = (),
) -> Rule:
    """Build an active rule, normalising tags and refusing an uncited rule;
    ``applies_to=("images",)`` makes a visual rule (issue 19); ``sources`` maps its
    sentences to the citations they came from (issue 25)."""
    norm_tags: list[str] = []
    for tag in tags:
        t = tag.strip().lower()
        problem = tag_problem(t, tag)
        if problem is not None:
            raise ValidationError(problem[0], hint=problem[1])
        if t not in norm_tags:
            norm_tags.append(t)
    eps = list(dict.fromkeys(e.strip() for e in episode_ids if e.strip()))
    if not eps:
        raise ValidationError("a rule must cite at least one episode (no provenance, no rule)")
    for ep in eps:
        if not EPISODE_ID_RE.match(ep):
            raise ValidationError(f"{ep!r} is not an episode ID")
    # The text first: a title made from empty text is empty too, and "needs a title"
    # would send the user after the wrong thing (issue 16).
    body = text.strip()
    if not body:
        raise ValidationError(
            "a rule needs text: the text given is empty",
            hint="say what to do, e.g. --text 'Lead with the pain'",
        )
    title = " ".join(title.split())
    if not title:
        raise ValidationError("a rule needs a title")
    for name, value in (("text", body), ("title", title)):
        reason = text_problem(value)
        if reason is not None:
            raise ValidationError(f"the rule's {name} {reason}", hint="remove it; text is stored as given")
    if any(FIELD_RE.match(line) or HEADING_RE.match(line) for line in body.splitlines()):
        raise ValidationError("rule text may not contain headings or '- Tags:'-style field lines")
    if any(_CONFLICT_LINE.match(line) for line in body.splitlines()):
        raise ValidationError(
            "rule text may not hold a merge-conflict marker line ('<<<<<<<' at a line's start): "
            "the playbook would no longer parse",
            hint="reword the line, or indent it",
        )
    kinds = tuple(dict.fromkeys(applies_to))
    if any(kind not in APPLIES_TO for kind in kinds):
        raise ValidationError(f"a rule applies to {', '.join(APPLIES_TO)} only, not {kinds!r}")
    mapped = tuple(sources)
    wrong = sentences.problems(body, mapped, eps)
    if wrong:
        raise ValidationError(wrong[0], hint="name, for each sentence, episodes the rule cites")
    return Rule(rule_id, title, body, tuple(norm_tags), tuple(eps), applies_to=kinds, sources=mapped)
