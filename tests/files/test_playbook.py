"""The playbook format: parse, render, byte-for-byte round trip, errors that name lines."""

from __future__ import annotations

import random

import pytest

from scarwarden.errors import ValidationError
from scarwarden.files import playbook as pb
from scarwarden.files.scaffold import EMPTY_PLAYBOOK, demo_memory_dir

CANONICAL = """\
# Playbook

Rules for the support desk. Reviewed every Friday.

Edits go through a pull request.

## PB-01: Lead LinkedIn posts with the reader's pain

Open with a pain-point hook, not the product.
Put hashtags at the end of the post.

#launchday is fine as the last word, never the first.

- Tags: linkedin, post, hook, hashtags
- Learnt in: ep-7k2m9q4x1z, ep-3f9a2c8k1m

## PB-05: Never post discount codes publicly

Codes reach coupon sites within days.

- Tags: discount, social
- Learnt in: ep-2b8d0c1a9f

## Retired

### PB-02: Use three emoji in every post

Emoji make posts friendly.

- Tags: emoji, post
- Learnt in: ep-3f9a2c8k1m
- Retired: engagement fell; contradicted by ep-7k2m9q4x1z
- Replaced by: PB-01

### PB-03: Post codes only on Twitter

Twitter is where the deals crowd is.

- Tags: discount, twitter
- Learnt in: ep-2b8d0c1a9f
- Retired: codes leaked within a day
"""


def errors(text: str) -> list[tuple[int | None, str]]:
    with pytest.raises(ValidationError) as exc:
        pb.parse(text, source="memory/playbook.md")
    assert all(p.file == "memory/playbook.md" for p in exc.value.problems)
    return [(p.line, p.message) for p in exc.value.problems]


def test_demo_playbook_round_trips_byte_for_byte() -> None:
    text = (demo_memory_dir() / "playbook.md").read_text(encoding="utf-8")
    book = pb.parse(text)
    assert len(book.rules) >= 10
    assert pb.render(book) == text
    assert all(rule.episode_ids for rule in book.rules)


def test_handmade_canonical_file_with_preamble_and_retired_rules_round_trips() -> None:
    book = pb.parse(CANONICAL)
    assert pb.render(book) == CANONICAL
    assert (
        book.preamble == "Rules for the support desk. Reviewed every Friday.\n\n"
        "Edits go through a pull request."
    )
    assert [r.id for r in book.rules] == ["PB-01", "PB-05"]
    assert [r.id for r in book.retired] == ["PB-02", "PB-03"]
    first = book.rules[0]
    assert first.title == "Lead LinkedIn posts with the reader's pain"
    assert first.text.endswith("#launchday is fine as the last word, never the first.")
    assert first.tags == ("linkedin", "post", "hook", "hashtags")
    assert first.episode_ids == ("ep-7k2m9q4x1z", "ep-3f9a2c8k1m")
    assert first.line == 7
    old = book.get("PB-02")
    assert old is not None and old.retired and old.replaced_by == "PB-01"
    assert old.reason == "engagement fell; contradicted by ep-7k2m9q4x1z"
    assert book.get("PB-03").replaced_by is None  # type: ignore[union-attr]
    assert book.cited_episode_ids() == {"ep-7k2m9q4x1z", "ep-3f9a2c8k1m", "ep-2b8d0c1a9f"}


def test_empty_playbook_of_init_round_trips() -> None:
    book = pb.parse(EMPTY_PLAYBOOK)
    assert book.rules == () and book.next_id() == "PB-01"
    assert pb.render(book) == EMPTY_PLAYBOOK
    assert pb.render(pb.empty()) == "# Playbook\n"


def test_rule_json_shape() -> None:
    book = pb.parse(CANONICAL)
    assert book.rules[1].to_json() == {
        "id": "PB-05",
        "title": "Never post discount codes publicly",
        "text": "Codes reach coupon sites within days.",
        "tags": ["discount", "social"],
        "episode_ids": ["ep-2b8d0c1a9f"],
    }
    assert book.retired[0].to_json()["retired"] is True


def test_next_id_counts_retired_rules_so_ids_are_never_reused() -> None:
    book = pb.parse(CANONICAL)
    assert book.next_id() == "PB-06"
    retired_last = pb.parse(CANONICAL.replace("PB-03", "PB-09"))
    assert retired_last.next_id() == "PB-10"  # PB-09 is retired, still never reused
    many = pb.Playbook(rules=(pb.make_rule("PB-99", "t", "x", ["a"], ["ep-abc"]),))
    assert many.next_id() == "PB-100"


def test_with_rule_and_with_retired_render_canonically() -> None:
    book = pb.parse(CANONICAL)
    new = pb.make_rule(
        book.next_id(),
        "  Answer   refund tickets within a day ",
        "Refunds are urgent.",
        ["Refund", "ticket", "refund"],
        ["ep-2b8d0c1a9f"],
    )
    assert new.title == "Answer refund tickets within a day"
    assert new.tags == ("refund", "ticket")
    book = book.with_rule(new).with_retired("PB-05", "superseded", "PB-06")
    text = pb.render(book)
    assert pb.render(pb.parse(text)) == text
    assert [r.id for r in pb.parse(text).retired] == ["PB-02", "PB-03", "PB-05"]
    assert "### PB-05: Never post discount codes publicly" in text
    assert "- Retired: superseded\n- Replaced by: PB-06\n" in text
    with pytest.raises(ValidationError, match="PB-05 is not an active rule"):
        book.with_retired("PB-05", "again", None)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"episode_ids": []}, "a rule must cite at least one episode (no provenance, no rule)"),
        ({"episode_ids": ["ep-../x"]}, "'ep-../x' is not an episode ID"),
        ({"tags": ["two words"]}, "tag 'two words' is not a slug"),
        ({"title": "   "}, "a rule needs a title"),
        ({"text": "\n"}, "a rule needs text"),
        ({"text": "Fine.\n## PB-02: sneaky"}, "rule text may not contain headings"),
        ({"text": "Fine.\n- Learnt in: ep-zzz"}, "rule text may not contain headings"),
    ],
)
def test_make_rule_refuses_bad_rules(kwargs: dict[str, object], message: str) -> None:
    args: dict[str, object] = {
        "rule_id": "PB-01",
        "title": "T",
        "text": "Do it.",
        "tags": ["a"],
        "episode_ids": ["ep-abc"],
    }
    args.update(kwargs)
    with pytest.raises(ValidationError) as exc:
        pb.make_rule(**args)  # type: ignore[arg-type]
    assert exc.value.message.startswith(message)


# -- errors that name the line --------------------------------------------------------


def test_duplicate_rule_id_names_both_lines() -> None:
    text = CANONICAL.replace("## PB-05:", "## PB-01:")
    assert errors(text) == [(17, "duplicate rule ID PB-01 (first at line 7)")]


def test_duplicate_between_active_and_retired_rules() -> None:
    text = CANONICAL.replace("### PB-03:", "### PB-05:")
    assert errors(text) == [(35, "duplicate rule ID PB-05 (first at line 17)")]


def test_rule_without_learnt_in_names_the_rule_line_and_field() -> None:
    text = CANONICAL.replace("- Learnt in: ep-2b8d0c1a9f\n\n## Retired", "\n## Retired")
    with pytest.raises(ValidationError) as exc:
        pb.parse(text)
    (problem,) = exc.value.problems
    assert (problem.line, problem.field) == (17, "Learnt in")
    assert problem.message == "PB-05: missing '- Learnt in:' line (no provenance, no rule)"
    assert "memory/playbook.md:17: field 'Learnt in': PB-05: missing" in exc.value.render()


def test_learnt_in_with_no_ids_or_bad_ids() -> None:
    text = CANONICAL.replace("- Learnt in: ep-2b8d0c1a9f\n\n## Retired", "- Learnt in:\n\n## Retired")
    assert errors(text) == [(22, "PB-05: 'Learnt in' cites no episode (no provenance, no rule)")]
    text = CANONICAL.replace("ep-7k2m9q4x1z, ep-3f9a2c8k1m", "ep-7k2m9q4x1z, EP-WRONG")
    assert errors(text) == [(15, "PB-01: 'EP-WRONG' is not an episode ID")]


@pytest.mark.parametrize(
    "heading",
    [
        "## PB-1: One digit",
        "## Rule about posts",
        "## PB-07 missing colon",
        "## PB-07:",
        "#### PB-07: Too deep",
    ],
)
def test_unparseable_heading_names_its_line(heading: str) -> None:
    text = CANONICAL.replace("## PB-05: Never post discount codes publicly", heading)
    (only,) = errors(text)
    assert only == (17, f"cannot parse heading {heading!r}")


def test_heading_level_must_match_section() -> None:
    assert errors(CANONICAL.replace("## PB-05:", "### PB-05:")) == [
        (17, "PB-05: active rules use '##' headings")
    ]
    assert errors(CANONICAL.replace("### PB-03:", "## PB-03:")) == [
        (35, "PB-03: rules under '## Retired' use '###' headings")
    ]


def test_other_structural_errors() -> None:
    assert errors("Playbook\n") == [(1, "the playbook must start with '# Playbook'")]
    assert errors("") == [(1, "the playbook must start with '# Playbook'")]
    assert errors(CANONICAL + "\n## Retired\n") == [(43, "a second '## Retired' section")]
    assert errors(CANONICAL.replace("# Playbook\n", "# Playbook\n\n# Again\n", 1))[0] == (
        3,
        "only one '# ' title is allowed",
    )
    assert errors(CANONICAL.replace("- Retired: codes leaked within a day\n", "")) == [
        (35, "PB-03: a retired rule needs '- Retired: <reason>'")
    ]
    assert errors(
        CANONICAL.replace(
            "- Learnt in: ep-2b8d0c1a9f\n\n## Retired",
            "- Learnt in: ep-2b8d0c1a9f\n- Retired: no\n\n## Retired",
        )
    ) == [(17, "PB-05: 'Retired'/'Replaced by' belong to retired rules")]
    assert errors(
        CANONICAL.replace(
            "## PB-05: Never post discount codes publicly\n\nCodes reach coupon sites within days.\n\n",
            "## PB-05: Never post discount codes publicly\n\n",
        )
    ) == [(17, "PB-05: the rule has no text")]
    assert errors(CANONICAL.replace("- Tags: discount, social", "- Tags: Discount")) == [
        (21, "PB-05: tag 'Discount' is not a slug")
    ]
    assert errors(CANONICAL.replace("- Replaced by: PB-01", "- Replaced by: PB-1")) == [
        (33, "PB-02: 'PB-1' is not a rule ID")
    ]


def test_a_byte_order_mark_before_the_title_is_named() -> None:
    # Notepad's "UTF-8 with BOM": the file starts with '# Playbook' as far as the eye
    # can tell, and the error said it must start with '# Playbook'.
    with pytest.raises(ValidationError) as caught:
        pb.parse("\ufeff" + CANONICAL, source="memory/playbook.md")
    [problem] = caught.value.problems
    assert problem.line == 1 and "byte order mark" in problem.message, problem
    assert "must start with" not in problem.message and problem.hint and "without a BOM" in problem.hint


def test_every_problem_is_listed_not_only_the_first() -> None:
    text = CANONICAL.replace("## PB-05: Never", "## PB-5: Never").replace(
        "- Tags: linkedin, post, hook, hashtags\n", ""
    )
    lines = [line for line, _ in errors(text)]
    assert lines == [7, 16]  # in file order: PB-01 lacks Tags, PB-5's heading is bad
    # Duplicates are found in a later pass; they are still listed in file order.
    dup = CANONICAL.replace("## PB-05: Never", "## PB-01: Never").replace(
        "- Retired: codes leaked within a day\n", ""
    )
    assert errors(dup) == [
        (17, "duplicate rule ID PB-01 (first at line 7)"),
        (35, "PB-03: a retired rule needs '- Retired: <reason>'"),
    ]


# -- property-style: generated playbooks round-trip --------------------------------------

WORDS = (
    "post",
    "ticket",
    "refund",
    "discount",
    "hook",
    "outage",
    "privacy",
    "reply",
    "customer",
    "invoice",
    "launch",
    "email",
    "subject",
    "webinar",
    "timezone",
)


def _random_rule(rng: random.Random, number: int, retired: bool) -> pb.Rule:
    title = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6))).capitalize()
    paragraphs = []
    for _ in range(rng.randint(1, 3)):
        lines = [
            " ".join(rng.choice(WORDS + ("#tag", "-", "*", "1.")) for _ in range(rng.randint(1, 12)))
            for _ in range(rng.randint(1, 3))
        ]
        paragraphs.append("\n".join(line.strip() or "x" for line in lines))
    text = "\n\n".join(paragraphs)
    if text.startswith(("- ", "#")):
        text = "Note: " + text
    tags = tuple(
        dict.fromkeys(rng.choice(WORDS) + rng.choice(["", "-x", "2"]) for _ in range(rng.randint(0, 4)))
    )
    eps = tuple(
        dict.fromkeys(
            "ep-" + "".join(rng.choice("0123456789abcdefghjkmnpqrstvwxyz") for _ in range(10))
            for _ in range(rng.randint(1, 4))
        )
    )
    rule = pb.Rule(f"PB-{number:02d}", title, text, tags, eps)
    if retired:
        from dataclasses import replace

        rule = replace(
            rule,
            retired=True,
            reason=f"replaced after {rng.choice(WORDS)}",
            replaced_by=rng.choice([None, f"PB-{number + 1:02d}"]),
        )
    return rule


@pytest.mark.parametrize("seed", range(40))
def test_generated_playbooks_round_trip(seed: int) -> None:
    rng = random.Random(seed)
    numbers = rng.sample(range(1, 300), rng.randint(0, 12))
    split = rng.randint(0, len(numbers))
    book = pb.Playbook(
        rules=tuple(_random_rule(rng, n, False) for n in numbers[:split]),
        retired=tuple(_random_rule(rng, n, True) for n in numbers[split:]),
        preamble=rng.choice(["", "Our rules.", "Line one.\n\nLine *two*."]),
    )
    text = pb.render(book)
    again = pb.parse(text)
    assert again == book  # Rule equality ignores the parsed line numbers
    assert pb.render(again) == text
    if numbers:
        assert again.next_id() == f"PB-{max(numbers) + 1:02d}"
