"""Parsing ``memory/playbook.md``: every problem reported at once, each with its line."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping
from typing import NamedTuple

from scarwarden.characters import REFUSED
from scarwarden.collector import collector_paused
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


#: A section under a '##'/'###' heading: (heading line number, heading, the numbers of
#: its body's lines). Numbers, not (number, line) pairs: a 100k-rule file has 700k lines,
#: and as many tuples kept Python's garbage collector busy for half the split's time.
_Section = tuple[int, str, list[int]]


def parse(text: str, *, source: str = "memory/playbook.md") -> Playbook:
    """Parse a playbook; raise :class:`ValidationError` listing every problem by line."""
    with collector_paused():
        return _parse(text, source)


def _parse(text: str, source: str) -> Playbook:
    lines, problems, preamble_lines, sections, retired_line = _structure(text, source)
    parsed = list(_each_rule(lines, sections, retired_line, problems, None))
    _check_unique_ids([(s.rule_id, s.line) for s in parsed], problems)
    _raise_any(problems)
    rules = tuple(s.rule for s in parsed if s.rule is not None and not s.retired)
    retired = tuple(s.rule for s in parsed if s.rule is not None and s.retired)
    preamble = "\n".join(preamble_lines).strip("\n")
    return Playbook(rules=rules, retired=retired, preamble=preamble)


class Section(NamedTuple):
    """One rule's section, as :func:`parse_changed` saw it."""

    rule_id: str
    line: int
    retired: bool
    #: Of its heading, level and body, byte for byte: a section whose digest is the
    #: same parses to the same rule (but for its line), whatever else the file says.
    digest: str
    #: The parsed rule; None when ``digest`` is the one the caller knew (not parsed).
    rule: Rule | None


def parse_changed(
    text: str, known: Mapping[str, str], *, source: str = "memory/playbook.md"
) -> list[Section]:
    """Every rule's section in file order (active, then retired), parsing only those
    whose digest is not ``known[rule_id]``: the index re-reads a 100k-rule playbook
    after one rule changed without parsing the other 99,999 (what :func:`parse` costs,
    ~5 s). Raises :class:`ValidationError` with the problems :func:`parse` reports: a
    known section parsed before with none (the caller keeps digests of parsed rules
    only), and a section's own problems depend on nothing outside it; the checks across
    sections (the file's lines, its structure, duplicate IDs) run on the whole file."""
    with collector_paused():
        lines, problems, _preamble, sections, retired_line = _structure(text, source)
        found = list(_each_rule(lines, sections, retired_line, problems, known))
        _check_unique_ids([(s.rule_id, s.line) for s in found], problems)
    _raise_any(problems)
    return found


def _structure(text: str, source: str) -> tuple[list[str], _Problems, list[str], list[_Section], int]:
    """The checks of the whole file, then its split into (its lines, the problems found
    so far, preamble, sections, line of '## Retired')."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    problems = _Problems(source)
    if "<<<<<<<" in text:
        _check_conflict_markers(lines, problems)
    # The whole text at once (a line's closing CR is its line ending, not text in it);
    # line by line only when something is found, to say where.
    if REFUSED.search(text.replace("\r\n", "\n")):
        _check_text(lines, problems)
    start = _after_title(lines, problems)
    preamble_lines, sections, retired_line = _split_sections(lines, start, problems)
    return lines, problems, preamble_lines, sections, retired_line


def _raise_any(problems: _Problems) -> None:
    if problems:
        problems.sort(key=lambda p: p.line or 0)  # file order, whichever pass found them
        raise ValidationError(f"{problems.source}: cannot parse the playbook", problems=list(problems))


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
    if i < len(lines) and lines[i].startswith("\ufeff"):  # invisible: say what it is
        problems.bad(
            i + 1,
            "the playbook starts with a byte order mark (U+FEFF, written by some editors); "
            f"'{TITLE}' must come first",
            "save it as UTF-8 without a BOM ('UTF-8', not 'UTF-8 with BOM')",
        )
    elif i >= len(lines) or lines[i].rstrip() != TITLE:
        problems.bad(i + 1, f"the playbook must start with '{TITLE}'")
    else:
        return i + 1
    raise ValidationError(f"{problems.source}: cannot parse the playbook", problems=list(problems))


def _split_sections(
    lines: list[str], start: int, problems: _Problems
) -> tuple[list[str], list[_Section], int]:
    """(preamble lines, sections, line of '## Retired' or 0), split at '##'/'###' headings."""
    preamble_lines: list[str] = []
    sections: list[_Section] = []
    in_retired = False
    retired_line = 0
    for number, line in enumerate(lines[start:], start=start + 1):
        if line[:1] == "#" and HEADING_RE.match(line):
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
            sections[-1][2].append(number)
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


def _each_rule(
    lines: list[str],
    sections: list[_Section],
    retired_line: int,
    problems: _Problems,
    known: Mapping[str, str] | None,
) -> Iterator[Section]:
    """Each valid rule section (heading checked, then its body, unless ``known`` holds
    its digest; ``known`` None: every body parsed, no digest taken)."""
    for number, heading, numbers in sections:
        match = _RULE_HEADING.match(heading)
        level_retired = bool(retired_line and number > retired_line)
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
        digest = "" if known is None else _digest(heading, level_retired, lines, numbers)
        if digest and known is not None and known.get(rule_id) == digest:
            yield Section(rule_id, number, level_retired, digest, None)
            continue
        body = [(n, lines[n - 1]) for n in numbers]
        rule = _parse_rule_body(rule_id, title, number, body, level_retired, problems.bad)
        if rule is not None:
            yield Section(rule_id, number, level_retired, digest, rule)


def _digest(heading: str, retired: bool, lines: list[str], numbers: list[int]) -> str:
    """Blank lines around the body are not the rule's (the parse drops them): the last
    rule gains one when '## Retired' comes after it."""
    if numbers and numbers[-1] - numbers[0] + 1 == len(numbers):
        body = lines[numbers[0] - 1 : numbers[-1]]  # one run of lines: a slice
    else:
        body = [lines[n - 1] for n in numbers]
    start, end = 0, len(body)
    while start < end and not body[start].strip():
        start += 1
    while end > start and not body[end - 1].strip():
        end -= 1
    raw = "\n".join([heading, "retired" if retired else "active", *body[start:end]])
    return hashlib.sha1(raw.encode("utf-8", "surrogatepass")).hexdigest()  # noqa: S324 (not security)


def _check_unique_ids(ids: list[tuple[str, int]], problems: _Problems) -> None:
    """Each rule ID once: ``ids``, (rule ID, heading line) in file order."""
    seen: dict[str, int] = {}
    for rule_id, line in ids:
        if rule_id in seen:
            problems.bad(
                line,
                f"duplicate rule ID {rule_id} (first at line {seen[rule_id]})",
                "rule IDs are unique and never reused; give this rule a new ID",
            )
        else:
            seen[rule_id] = line


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
