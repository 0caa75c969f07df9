"""``parse_changed``, the index's incremental parse: it parses only the sections whose
digest it was not given, and must say what :func:`parse` says of the same text, the
same rules and the same problems, whatever was edited since the digests were taken."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scarwarden.errors import ValidationError
from scarwarden.files import playbook as pb

DEMO = (Path(pb.__file__).resolve().parents[1] / "demo" / "memory" / "playbook.md").read_text(
    encoding="utf-8"
)


def _outcome(parse, text: str) -> tuple[str, object]:
    try:
        return "ok", parse(text)
    except ValidationError as exc:
        return "error", exc.render()


def _digests(text: str) -> dict[str, str]:
    return {s.rule_id: s.digest for s in pb.parse_changed(text, {})}


def _same_as_parse(text: str, before: str) -> list[pb.Section]:
    """``parse_changed(text, digests of before)``, checked against ``parse(text)``: the
    same problems, or the same rules in the same places, where each section it did not
    parse is one whose rule is the one ``before`` had (but for its line)."""
    known = _digests(before)
    earlier = {r.id: r for r in pb.parse(before).all_rules()}
    full = _outcome(pb.parse, text)
    part = _outcome(lambda t: pb.parse_changed(t, known), text)
    assert full[0] == part[0]
    if full[0] == "error":
        assert part[1] == full[1]  # every problem, in the same words and order
        return []
    book, sections = full[1], part[1]
    assert isinstance(book, pb.Playbook) and isinstance(sections, list)
    rules = book.all_rules()
    assert [(s.rule_id, s.line, s.retired) for s in sections] == [(r.id, r.line, r.retired) for r in rules]
    for section, rule in zip(sections, rules, strict=True):
        if section.rule is None:  # not parsed: what it says did not change
            assert dataclasses.replace(earlier[rule.id], line=rule.line) == rule
        else:
            assert section.rule == rule
    return sections


#: One edit of a line: delete it, repeat it, swap it with the next, put a blank line or a
#: stray word in, replace one of its words.
_EDITS = ("delete", "repeat", "swap", "blank", "word", "replace")


@st.composite
def _edited(draw: st.DrawFn, text: str) -> str:
    lines = text.split("\n")
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(lines) - 1))
        edit = draw(st.sampled_from(_EDITS))
        if edit == "delete":
            del lines[i]
        elif edit == "repeat":
            lines.insert(i, lines[i])
        elif edit == "swap" and i + 1 < len(lines):
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
        elif edit == "blank":
            lines.insert(i, "")
        elif edit == "word":
            lines[i] += " " + draw(st.sampled_from(["again", "PB-01", "ep-zzzzzzzzzz", "Bad Tag", ","]))
        elif edit == "replace" and lines[i].split():
            words = lines[i].split(" ")
            words[draw(st.integers(0, len(words) - 1))] = draw(st.sampled_from(["x", "##", "-", "PB-02:"]))
            lines[i] = " ".join(words)
    return "\n".join(lines)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_parse_changed_says_what_parse_says_after_any_edit(data: st.DataObject) -> None:
    # Digests from a valid version (the index keeps those of a playbook that parsed),
    # then any edit of it, valid or not.
    before = DEMO
    for _ in range(data.draw(st.integers(0, 2))):
        candidate = data.draw(_edited(before))
        if _outcome(pb.parse, candidate)[0] == "ok":
            before = candidate
    _same_as_parse(data.draw(_edited(before)), before)


def test_only_the_edited_section_is_parsed() -> None:
    edited = DEMO.replace("never with a feature list.", "never open with a feature list.")
    parsed = [s.rule_id for s in _same_as_parse(edited, DEMO) if s.rule is not None]
    assert parsed == ["PB-01"]
    # Blank lines around a rule, or a rule moved, are not a change of what it says.
    first = DEMO.index("\n## PB-02:")
    spaced = DEMO[:first] + "\n\n" + DEMO[first:] + "\n\n"
    assert [s for s in _same_as_parse(spaced, DEMO) if s.rule is not None] == []
    # Retiring the last rule by hand: its level is part of its digest, so it is parsed
    # again (and the blank line '## Retired' puts after the rule before is not a change).
    last = DEMO.rindex("\n## PB-")
    retired = DEMO[:last] + "\n\n## Retired\n\n#" + DEMO[last + 1 :] + "- Retired: no longer true\n"
    assert pb.parse(retired).retired[0].id == "PB-8wy7w60p"
    parsed = [(s.rule_id, s.retired) for s in _same_as_parse(retired, DEMO) if s.rule is not None]
    assert parsed == [("PB-8wy7w60p", True)]


def test_a_known_digest_of_another_rule_is_not_trusted() -> None:
    """The digests are per rule ID: a section whose text matches another rule's digest
    (a rule renamed into another's ID) is parsed."""
    known = _digests(DEMO)
    swapped = dict(known, **{"PB-01": known["PB-02"], "PB-02": known["PB-01"]})
    parsed = {s.rule_id for s in pb.parse_changed(DEMO, swapped) if s.rule is not None}
    assert parsed == {"PB-01", "PB-02"}


def test_the_collector_is_put_back_as_it_was() -> None:
    """The parse pauses Python's cycle collector; it leaves it as it found it, also when
    the playbook does not parse."""
    import gc

    broken = DEMO.replace("- Tags: ", "- Tags: Not A Slug, ", 1)
    assert gc.isenabled()
    for text in (DEMO, broken):
        try:
            pb.parse(text)
            pb.parse_changed(text, {})
        except ValidationError:
            pass
        assert gc.isenabled()
    gc.disable()
    try:
        pb.parse(DEMO)
        assert not gc.isenabled()
    finally:
        gc.enable()
