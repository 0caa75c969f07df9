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
    "render_changed",
    "spliced",
    "universal_newlines",
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
    diff a reviewer reads holds the new rule's lines only (:func:`spliced`)."""
    before = parse(universal_newlines(text))
    return spliced(text, before, before.with_rule(rule))


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


def render_changed(text: str, before: Playbook, after: Playbook) -> str | None:
    """``text`` (a playbook file as it is, its line endings kept; ``before`` is what it
    parses to) changed into ``after`` as :func:`render` would place the change, every
    byte outside the rules that changed kept: an updated rule is re-rendered where it
    is, a retired one moves to the end of '## Retired', a new one goes after the last
    active rule (as :func:`render_added` puts it), in the file's own line endings.
    ``None`` when ``after`` is not such a change of ``before`` (render it whole)."""
    old = {rule.id: rule for rule in before.all_rules()}
    kept = [rule.id for rule in after.rules if rule.id in old]
    kept_ids = set(kept)  # once: a set per rule made a 20,000-rule merge take minutes
    new_active = [rule for rule in after.rules if rule.id not in old]
    old_retired = [rule.id for rule in before.retired]
    if (
        after.preamble != before.preamble
        or kept != [rule.id for rule in before.rules if rule.id in kept_ids]
        or [rule.id for rule in after.rules[: len(kept)]] != kept
        or [rule.id for rule in after.retired[: len(old_retired)]] != old_retired
    ):
        return None
    lines = _LINE_END.split(text)
    newline = lines[0][len(lines[0].rstrip("\r\n")) :] or "\n"
    parts: tuple[list[str], list[str]] = ([], [])  # pieces before '## Retired', and from it
    part = parts[0]
    for line in lines:
        bare = line.rstrip("\r\n")
        if bare[:1] == "#" and bare.rstrip() == RETIRED_HEADING:
            part = parts[1]
            part.append("")
        elif bare[:1] == "#" and HEADING_RE.match(bare) or not part:
            part.append("")  # a heading starts a piece: a rule's section, or the title's
        part[-1] += line
    wanted = {rule.id: rule for rule in after.all_rules()}
    active = "".join(_section(piece, old, wanted, newline) for piece in parts[0])
    retired = "".join(_section(piece, old, wanted, newline) for piece in parts[1])
    moved = [_block(rule, "###", newline) for rule in after.retired[len(old_retired) :]]
    added = [_block(rule, "##", newline) for rule in new_active]
    active = _appended(active, added, newline, more=bool(retired or moved))
    if retired:
        return active + _appended(retired, moved, newline, more=False)
    return _appended(active, [RETIRED_HEADING, *moved] if moved else [], newline, more=False)


def universal_newlines(text: str) -> str:
    """``text`` with its line endings read as LF, as the parser reads a file."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def spliced(text: str, before: Playbook, after: Playbook, *, source: str = "memory/playbook.md") -> str:
    """The file ``text`` (parsed as ``before``) changed into ``after``: the rules that
    changed spliced into it (:func:`render_changed`: its line endings and spacing kept,
    the diff holds the changes only), or, when that would not read back as ``after``,
    ``after`` rendered whole in the file's line endings; never a text that cannot be
    read back."""
    out = render_changed(text, before, after)
    if out is None or parse(universal_newlines(out), source=source) != after:
        out = render(after)
        parse(out, source=source)
        if text.split("\n", 1)[0].endswith("\r"):  # a CRLF file (its first line's end)
            out = out.replace("\n", "\r\n")
    return out


#: A rule's heading at the start of a piece of the file: its level and ID.
_PIECE_RULE = re.compile(r"(##|###) (\S+): ")


def _section(piece: str, old: dict[str, Rule], wanted: dict[str, Rule], newline: str) -> str:
    """One piece of the file: the title and preamble or '## Retired' (kept), or a rule's
    section: kept while its rule is unchanged, its changed lines re-rendered (the blank
    lines after them kept) when changed (:func:`_updated`), and when it left its part of
    the file its own lines dropped with one blank line after them (the others kept)."""
    match = _PIECE_RULE.match(piece)
    if match is None:
        return piece
    level, rule_id = match.groups()
    rule = wanted.get(rule_id)
    end = len(piece.rstrip())
    while end < len(piece) and piece[end] not in "\r\n":
        end += 1  # the rest of its last line: the blank lines after it are kept
    if rule is None or (level == "###") != rule.retired:
        return "".join(_LINE_END.split(piece[end:])[2:])  # past its line end and one blank line
    if rule == old.get(rule_id):
        return piece
    return _updated(piece[:end], old.get(rule_id), rule, level, newline) + piece[end:]


def _updated(section: str, before: Rule | None, rule: Rule, level: str, newline: str) -> str:
    """A rule's ``section`` (its lines, without the last one's line end) for ``rule``:
    the heading, the text (all its lines, spacing and wrapping as they are) and each
    field line kept as written when what it says did not change, the others rendered."""
    if before is None:
        return _block(rule, level, newline)
    lines = _LINE_END.split(section + newline)[:-1]  # each with its line end
    bare = [line.rstrip("\r\n") for line in lines]
    split = len(lines)
    while split > 1 and FIELD_RE.match(bare[split - 1]):
        split -= 1
    fresh, was = _render_rule(rule, level), _render_rule(before, level)
    out = [lines[0] if fresh[0] == was[0] else _block_lines(fresh[:1], newline)]
    out += lines[1:split] if rule.text == before.text else [_block_lines(fresh[1:4], newline)]
    written = {}
    for line in lines[split:]:
        field = FIELD_RE.match(line.rstrip("\r\n"))
        assert field is not None
        written[field.group(1)] = line
    for row in fresh[4:]:
        field = FIELD_RE.match(row)
        name = field.group(1) if field else ""
        out.append(written[name] if row in was[4:] and name in written else _block_lines([row], newline))
    joined = "".join(out)
    return joined[: -2 if joined.endswith("\r\n") else -1]


def _block_lines(rows: list[str], newline: str) -> str:
    """Rendered ``rows`` (a rule's text may hold line ends), each ending in ``newline``."""
    return "".join(row.replace("\n", newline) + newline for row in rows)


def _block(rule: Rule, level: str, newline: str) -> str:
    """A rule rendered in the file's line endings, without the last line's."""
    return "\n".join(_render_rule(rule, level)).replace("\n", newline)


def _appended(part: str, blocks: list[str], newline: str, *, more: bool) -> str:
    """``part`` with ``blocks`` (each rendered, without its last line ending) after it,
    a blank line before each, and after the last when ``more`` text follows: as
    :func:`render_added` places a rule."""
    if not blocks:
        return part
    add = (newline + newline).join(blocks) + newline
    core = part[:-2] if part.endswith("\r\n") else part[:-1] if part[-1:] in ("\r", "\n") else part
    last = core[max(core.rfind("\n"), core.rfind("\r")) + 1 :]  # the last line, without its ending
    if part and core == part:
        add = newline + add  # a last line without its line ending
    if last.strip():
        add = newline + add  # a blank line between
    if more:
        add += newline
    return part + add
