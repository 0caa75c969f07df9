"""Parsing ``memory/playbook.md``: every problem reported at once, each with its line."""

from __future__ import annotations

import re

from scarwarden.errors import Problem, ValidationError
from scarwarden.files.episode_fields import RULE_ID_RE
from scarwarden.files.input_policy import text_problem
from scarwarden.files.playbook_fields import Bad, applies_to_of, episode_ids_of, sources_of, tags_of
from scarwarden.files.playbook_model import (
    FIELD_RE,
    HEADING_RE,
    RETIRED_HEADING,
    TITLE,
    Playbook,
    Rule,
)
from scarwarden.files.rule_ids import RULE_ID_PATTERN

_RULE_HEADING = re.compile(rf"^(##|###) ({RULE_ID_PATTERN}): (\S.*?)\s*$")


_FIELD_KEYS = {
    "Tags": "tags",
    "Learnt in": "episode_ids",
    "Sentences from": "sources",
    "Applies to": "applies_to",
    "Retired": "reason",
    "Replaced by": "replaced_by",
}


class _Problems(list[Problem]):
    """The problems found while parsing one playbook file, each with its line."""

    def __init__(self, source: str) -> None:
        super().__init__()
        self.source = source

    def bad(self, line: int, message: str, hint: str | None = None, fld: str | None = None) -> None:
        self.append(Problem(message, file=self.source, line=line, field=fld, hint=hint))


#: A section under a '##'/'###' heading: (heading line number, heading, numbered body).
_Section = tuple[int, str, list[tuple[int, str]]]


def parse(text: str, *, source: str = "memory/playbook.md") -> Playbook:
    """Parse a playbook; raise :class:`ValidationError` listing every problem by line."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    problems = _Problems(source)
    _check_conflict_markers(lines, problems)
    _check_text(lines, problems)
    start = _after_title(lines, problems)
    preamble_lines, sections, retired_line = _split_sections(lines, start, problems)
    rules, retired = _parse_sections(sections, retired_line, problems)
    _check_unique_ids(rules + retired, problems)
    if problems:
        problems.sort(key=lambda p: p.line or 0)  # file order, whichever pass found them
        raise ValidationError(f"{source}: cannot parse the playbook", problems=list(problems))
    preamble = "\n".join(preamble_lines).strip("\n")
    return Playbook(rules=tuple(rules), retired=tuple(retired), preamble=preamble)


def _check_text(lines: list[str], problems: _Problems) -> None:
    """The input policy (:mod:`scarwarden.files.input_policy`), line by line; a CRLF
    line ending is a line ending, not a carriage return in the text."""
    for number, line in enumerate(lines, 1):
        reason = text_problem(line.removesuffix("\r"))
        if reason is not None:
            problems.bad(number, f"the line {reason}", "remove it; the playbook is plain text")


_CONFLICT_START = re.compile(r"^<{7}(?: |$)")
_CONFLICT_END = re.compile(r"^>{7}(?: |$)")


def _check_conflict_markers(lines: list[str], problems: _Problems) -> None:
    """Merge conflict markers (git's, or the playbook merge driver's around one rule):
    name the rule to resolve, and parse nothing else, which would only add noise."""
    found = False
    for i, line in enumerate(lines):
        if not _CONFLICT_START.match(line):
            continue
        found = True
        where = "the playbook"
        for later in lines[i + 1 :]:
            heading = _RULE_HEADING.match(later)
            if heading:
                where = heading.group(2)
                break
            if _CONFLICT_END.match(later):
                break
        problems.bad(
            i + 1,
            f"{where}: unresolved merge conflict; resolve the conflict in {where}",
            "keep one version (or combine them), delete the '<<<<<<<', '=======' and '>>>>>>>' "
            "lines, then run 'scarwarden check'",
        )
    if found:
        raise ValidationError(f"{problems.source}: cannot parse the playbook", problems=list(problems))


def _after_title(lines: list[str], problems: _Problems) -> int:
    """The index of the line after the title; no title: nothing else can be parsed."""
    # Blank lines before the title are tolerated; anything else is not.
    i = 0
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i >= len(lines) or lines[i].rstrip() != TITLE:
        problems.bad(i + 1, f"the playbook must start with '{TITLE}'")
        raise ValidationError(f"{problems.source}: cannot parse the playbook", problems=list(problems))
    return i + 1


def _split_sections(
    lines: list[str], start: int, problems: _Problems
) -> tuple[list[str], list[_Section], int]:
    """(preamble lines, sections, line of '## Retired' or 0), split at '##'/'###' headings."""
    preamble_lines: list[str] = []
    sections: list[_Section] = []
    in_retired = False
    retired_line = 0
    for number, line in enumerate(lines[start:], start=start + 1):
        if HEADING_RE.match(line):
            if line.rstrip() == RETIRED_HEADING:
                if in_retired:
                    problems.bad(number, "a second '## Retired' section")
                else:
                    in_retired, retired_line = True, number
                continue
            if line.startswith("# "):
                problems.bad(number, "only one '# ' title is allowed", "rules are '## PB-NN: title'")
                continue
            sections.append((number, line, []))
            continue
        if sections:
            sections[-1][2].append((number, line))
        elif in_retired:
            if line.strip():
                problems.bad(
                    number,
                    "text under '## Retired' before the first retired rule",
                    "retired rules are '### PB-NN: title' sections",
                )
        else:
            preamble_lines.append(line)
    return preamble_lines, sections, retired_line


def _parse_sections(
    sections: list[_Section], retired_line: int, problems: _Problems
) -> tuple[list[Rule], list[Rule]]:
    """(active rules, retired rules): each section's heading checked, then its body."""
    rules: list[Rule] = []
    retired: list[Rule] = []
    for number, heading, body in sections:
        match = _RULE_HEADING.match(heading)
        level_retired = retired_line and number > retired_line
        if not match:
            problems.bad(
                number,
                f"cannot parse heading {heading.strip()!r}",
                "rule headings look like '## PB-07: Short title' (retired: '### PB-07: ...')",
            )
            continue
        level, rule_id, title = match.groups()
        if level_retired and level != "###":
            problems.bad(number, f"{rule_id}: rules under '## Retired' use '###' headings")
            continue
        if not level_retired and level != "##":
            problems.bad(
                number,
                f"{rule_id}: active rules use '##' headings",
                "move it under '## Retired' or make it '## '",
            )
            continue
        rule = _parse_rule_body(rule_id, title, number, body, bool(level_retired), problems.bad)
        if rule is not None:
            (retired if level_retired else rules).append(rule)
    return rules, retired


def _check_unique_ids(rules: list[Rule], problems: _Problems) -> None:
    seen: dict[str, int] = {}
    for rule in rules:
        if rule.id in seen:
            problems.bad(
                rule.line,
                f"duplicate rule ID {rule.id} (first at line {seen[rule.id]})",
                "rule IDs are unique and never reused; give this rule a new ID",
            )
        else:
            seen[rule.id] = rule.line


def _parse_rule_body(
    rule_id: str, title: str, heading_line: int, body: list[tuple[int, str]], retired: bool, bad: Bad
) -> Rule | None:
    """One rule's text and field list; ``None`` (problems reported) when it is invalid."""
    text_lines, field_lines = _split_body(body)
    values, ok = _field_values(rule_id, field_lines, bad)
    if not text_lines:
        bad(heading_line, f"{rule_id}: the rule has no text", "write the rule under its heading")
        ok = False
    if "tags" not in values:
        bad(
            heading_line,
            f"{rule_id}: missing '- Tags:' line",
            "end the rule with '- Tags: a, b' and '- Learnt in: ep-...'",
            "Tags",
        )
        ok = False
    if "episode_ids" not in values:
        bad(
            heading_line,
            f"{rule_id}: missing '- Learnt in:' line (no provenance, no rule)",
            "cite the episodes that taught the rule: '- Learnt in: ep-abc, ep-def'",
            "Learnt in",
        )
        ok = False
    tags, tags_ok = tags_of(rule_id, values, bad)
    episode_ids, ok = episode_ids_of(rule_id, values, bad, ok and tags_ok)
    reason = values.get("reason", (0, ""))[1] or None
    replaced_by = values.get("replaced_by", (0, ""))[1] or None
    if not retired and ("reason" in values or "replaced_by" in values):
        bad(
            heading_line,
            f"{rule_id}: 'Retired'/'Replaced by' belong to retired rules",
            "move the rule under '## Retired' as '### ...'",
        )
        ok = False
    if retired and not reason:
        bad(heading_line, f"{rule_id}: a retired rule needs '- Retired: <reason>'")
        ok = False
    if replaced_by and not RULE_ID_RE.match(replaced_by):
        bad(values["replaced_by"][0], f"{rule_id}: {replaced_by!r} is not a rule ID")
        ok = False
    applies_to, applies_ok = applies_to_of(rule_id, values, bad)
    text = "\n".join(line for _, line in text_lines).strip("\n")
    sources, sources_ok = sources_of(rule_id, values, text, episode_ids, bad)
    if not ok or not applies_ok or not sources_ok:
        return None
    return Rule(
        rule_id,
        title,
        text,
        tuple(tags),
        tuple(episode_ids),
        retired,
        reason,
        replaced_by,
        heading_line,
        applies_to=applies_to,
        sources=sources,
    )


def _split_body(body: list[tuple[int, str]]) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """(text lines, field lines): the field list is the trailing run of '- Field:' lines."""
    # Trim blank lines at both ends.
    while body and not body[-1][1].strip():
        body.pop()
    while body and not body[0][1].strip():
        body.pop(0)
    split = len(body)
    while split > 0 and FIELD_RE.match(body[split - 1][1]):
        split -= 1
    text_lines = body[:split]
    while text_lines and not text_lines[-1][1].strip():
        text_lines.pop()
    return text_lines, body[split:]


def _field_values(
    rule_id: str, field_lines: list[tuple[int, str]], bad: Bad
) -> tuple[dict[str, tuple[int, str]], bool]:
    """Field key -> (line, value), and whether no field was given twice."""
    values: dict[str, tuple[int, str]] = {}
    ok = True
    for number, line in field_lines:
        m = FIELD_RE.match(line)
        assert m is not None
        key = _FIELD_KEYS[m.group(1)]
        if key in values:
            bad(number, f"{rule_id}: '{m.group(1)}' given twice")
            ok = False
        values[key] = (number, (m.group(2) or "").strip())
    return values, ok
