"""``render_changed``, how ``distill`` writes: the rules that changed spliced into the file
as it is. For a canonical file it must write exactly what :func:`render` writes (what
distill wrote before it), whatever rules were added, updated and retired; for a CRLF
file, the same text in CRLF."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scarwarden.files import playbook as pb

ROOT = Path(pb.__file__).resolve().parents[2]
#: The demo's playbook and the project's own: the playbooks distill meets.
BOOKS = {
    "demo": (ROOT / "scarwarden" / "demo" / "memory" / "playbook.md").read_text(encoding="utf-8"),
    "memory": (ROOT / "memory" / "playbook.md").read_text(encoding="utf-8"),
}
EPISODES = ["ep-9ak5fm33w3", "ep-b9jr19c6sp", "ep-hm3eyyreap"]
_WORDS = st.sampled_from(["Test", "twice", "ship", "the", "webinar", "in UTC", "first", "again"])


@st.composite
def _changed(draw: st.DrawFn, book: pb.Playbook) -> pb.Playbook:
    """``book`` after what a distillation does: updates, retirements (some replaced by a
    rule added), additions, in any number and order."""
    for n in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["add", "update", "retire"]))
        if kind != "add" and not book.rules:
            continue
        text = " ".join(draw(st.lists(_WORDS, min_size=1, max_size=6))) + "."
        eps = draw(st.lists(st.sampled_from(EPISODES), min_size=1, max_size=2, unique=True))
        if kind == "add":
            rule = pb.make_rule("PB-00", f"New {n}", text, ["new"], eps)
            book = book.with_rule(book.minted(rule))
            continue
        rule = draw(st.sampled_from(book.rules))
        if kind == "update":
            book = book.with_rule(replace(rule, text=text, episode_ids=(*rule.episode_ids, *eps)))
        else:
            by = draw(st.sampled_from([None, *(r.id for r in book.rules if r.id != rule.id)]))
            book = book.with_retired(rule.id, f"gone ({n})", by)
    return book


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), name=st.sampled_from(sorted(BOOKS)), retire_first=st.integers(0, 2))
def test_a_canonical_file_gets_exactly_the_canonical_text(
    data: st.DataObject, name: str, retire_first: int
) -> None:
    book = pb.parse(BOOKS[name])
    for rule in book.rules[:retire_first]:  # with and without a '## Retired' section
        book = book.with_retired(rule.id, "old", None)
    text = pb.render(book)
    after = data.draw(_changed(book))
    assert pb.render_changed(text, book, after) == pb.render(after)
    crlf = pb.render_changed(text.replace("\n", "\r\n"), book, after)
    assert crlf == pb.render(after).replace("\n", "\r\n")


@pytest.mark.parametrize("text", [pb.TITLE + "\n", pb.TITLE, f"\n\n{pb.TITLE}\n\nA preamble.\n"])
def test_the_smallest_playbooks(text: str) -> None:
    book = pb.parse(text)
    rule = book.minted(pb.make_rule("PB-00", "New", "Test twice.", ["qa"], EPISODES[:1]))
    after = book.with_rule(rule)
    expected = pb.render(after)
    if text == pb.render(book):
        assert pb.render_changed(text, book, after) == expected
    spliced = pb.render_changed(text, book, after)
    assert spliced is not None and spliced.startswith(text) and pb.parse(spliced) == after
    retired = after.with_retired(rule.id, "gone", None)
    spliced = pb.render_changed(pb.render(after), after, retired)
    assert spliced == pb.render(retired)


def test_hand_spacing_outside_the_changed_rules_is_kept() -> None:
    book = pb.parse(BOOKS["demo"])
    text = BOOKS["demo"].replace("\n\n## PB-02", "  \n\n\n## PB-02")
    text = text.replace("- Tags: linkedin", "- Tags:  linkedin")
    first, second = book.rules[0], book.rules[1]
    after = book.with_rule(replace(second, text="Changed.")).with_retired(book.rules[2].id, "gone", None)
    spliced = pb.render_changed(text, pb.parse(text), after)
    assert spliced is not None and pb.parse(spliced) == after
    assert spliced.startswith(text[: text.index(f"## {second.id}")])  # PB-01 and its spacing kept
    assert "- Tags:  linkedin" in spliced and first.id in spliced


def test_a_change_it_cannot_place_is_left_to_render() -> None:
    book = pb.parse(BOOKS["demo"])
    reordered = replace(book, rules=book.rules[::-1])
    assert pb.render_changed(BOOKS["demo"], book, reordered) is None
    assert pb.render_changed(BOOKS["demo"], book, replace(book, preamble="New words.")) is None


HAND = """# Playbook

## PB-7k2m9q4x: Lead with the pain


Open with the reader's pain,
not the product.

Then say what changed.

- Tags: linkedin,post
- Learnt in: ep-9ak5fm33w3

## PB-3f9a2c8k: Say the timezone

Always name the timezone.

- Tags: time
- Learnt in: ep-b9jr19c6sp



## PB-4d8b1c2e: Keep it short

Short posts win.

- Tags: post
- Learnt in: ep-hm3eyyreap
"""


def _diff(before: str, after: str) -> list[str]:
    import difflib

    return [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and line[:3] not in ("+++", "---")
    ]


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_an_updated_rule_keeps_its_lines_that_did_not_change(newline: str) -> None:
    text = HAND.replace("\n", newline)
    book = pb.parse(HAND)
    rule = book.rules[0]
    after = book.with_rule(replace(rule, episode_ids=(*rule.episode_ids, EPISODES[2])))
    out = pb.spliced(text, book, after)
    assert _diff(text, out) == [
        "-- Learnt in: ep-9ak5fm33w3",
        f"+- Learnt in: ep-9ak5fm33w3, {EPISODES[2]}",
    ]
    assert out.count("\r\n") == (out.count("\n") if newline == "\r\n" else 0)


def test_an_updated_title_or_text_is_rendered_and_the_rest_kept() -> None:
    book = pb.parse(HAND)
    rule = book.rules[0]
    out = pb.spliced(HAND, book, book.with_rule(replace(rule, title="Lead with their pain")))
    assert _diff(HAND, out) == [
        f"-## {rule.id}: Lead with the pain",
        f"+## {rule.id}: Lead with their pain",
    ]
    out = pb.spliced(HAND, book, book.with_rule(replace(rule, text="Pain first.\n\nThen the change.")))
    assert pb.parse(out) == book.with_rule(replace(rule, text="Pain first.\n\nThen the change."))
    assert "- Tags: linkedin,post\n" in out  # the field lines that did not change


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_retired_rule_takes_its_own_lines_and_one_blank_line(newline: str) -> None:
    text = HAND.replace("\n", newline)
    book = pb.parse(HAND)
    gone = book.rules[1]
    out = pb.spliced(text, book, book.with_retired(gone.id, "merged into PB-7k2m9q4x", None))
    removed = [line for line in _diff(text, out) if line.startswith("-")]
    assert removed == [
        f"-## {gone.id}: Say the timezone",
        "-",
        "-Always name the timezone.",
        "-",
        "-- Tags: time",
        "-- Learnt in: ep-b9jr19c6sp",
        "-",
    ]
    assert f"- Learnt in: ep-9ak5fm33w3{newline}{newline}{newline}{newline}## PB-4d8b1c2e" in out
    assert "\n" not in out.replace("\r\n", "") if newline == "\r\n" else "\r" not in out


def test_a_retired_rule_with_lines_of_text_keeps_crlf() -> None:
    book = pb.parse(HAND)
    out = pb.spliced(HAND.replace("\n", "\r\n"), book, book.with_retired(book.rules[0].id, "old", None))
    assert "\n" not in out.replace("\r\n", "")


def test_a_change_rendered_whole_keeps_a_crlf_file_crlf() -> None:
    book = pb.parse(BOOKS["demo"])
    reordered = replace(book, rules=book.rules[::-1])
    out = pb.spliced(BOOKS["demo"].replace("\n", "\r\n"), book, reordered)
    assert out == pb.render(reordered).replace("\n", "\r\n")
    assert pb.spliced(BOOKS["demo"], book, reordered) == pb.render(reordered)
