"""What each correction teaches: offline updates carry the lesson, contradictions supersede."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import git

from scarwarden.distill import distill
from scarwarden.files import claims
from scarwarden.files import playbook as pb
from scarwarden.files.record import add_episodes
from scarwarden.gate.check import check_all
from scarwarden.repo import MemoryRepo


def record(repo: MemoryRepo, correction: str, tags: list[str], at: str, **extra: Any) -> str:
    data = {"task": "Draft the LinkedIn post", "action": "Wrote a draft", "correction": correction}
    data.update(tags=tags, at=at, source="correction", **extra)
    return add_episodes(repo, [data])[0].id


def body(repo: MemoryRepo) -> str:
    return git(repo.root, "log", "-1", "--format=%B").stdout


def test_the_emoji_story_end_to_end(memory_repo: MemoryRepo, make_cli: Any) -> None:
    """The issue's story through the real CLI. Re-derived for issue 25 (one rule per
    lesson): the emoji lesson shares only tags with the pain-point rule, so it is a rule
    of its own (it was absorbed by tag overlap); the later contradicting correction
    supersedes that rule, and the episode that taught only the old wording is cited by
    the retired rule alone and accounted for as left out."""
    cli = make_cli(memory_repo.root)
    record(
        memory_repo,
        "Open with the reader's pain point; hashtags at the end",
        ["linkedin", "post"],
        "2026-11-01T10:00:00Z",
    )
    assert cli("distill", "--offline").exit_code == 0
    (rule,) = pb.parse(memory_repo.playbook_path.read_text()).rules
    emoji = record(
        memory_repo,
        "One emoji at most in LinkedIn posts",
        ["linkedin", "post", "emoji"],
        "2026-11-02T10:00:00Z",
    )
    out = cli("distill", "--offline")
    assert out.exit_code == 0, out.output
    book = pb.parse(memory_repo.playbook_path.read_text())
    assert book.get(rule.id) == rule  # never absorbed by tag overlap
    (emoji_rule,) = [r for r in book.rules if r.id != rule.id]
    assert emoji_rule.text == "One emoji at most in LinkedIn posts."
    assert emoji_rule.episode_ids == (emoji,) and emoji_rule.tags == ("linkedin", "post", "emoji")
    assert [(s.sentence, s.episode_ids, s.kind) for s in emoji_rule.said()] == [
        ("One emoji at most in LinkedIn posts.", (emoji,), "stated")
    ]
    assert f"- {emoji}: cited by {emoji_rule.id}" in body(memory_repo)

    never = record(
        memory_repo, "No emoji at all", ["linkedin", "emoji"], "2026-11-03T10:00:00Z", corrected_by="maria"
    )
    out = cli("distill", "--offline", "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    (change,) = data["changes"]
    assert change["op"] == "supersede" and change["rule_id"] == emoji_rule.id
    book = pb.parse(memory_repo.playbook_path.read_text())
    old, new = book.get(emoji_rule.id), book.get(change["replaced_by"])
    assert old is not None and old.retired and old.replaced_by == change["replaced_by"]
    assert old.reason is not None and f"contradicted by {never}" in old.reason
    assert "emoji (1 against 0)" in old.reason
    assert new is not None and not new.retired
    assert new.text == "No emoji at all."
    assert new.episode_ids == (never,)  # the contradicted wording's episode is not cited
    assert data["contradictions"] == [
        {
            "rule": emoji_rule.id,
            "episode_id": never,
            "reason": "a different limit on emoji (1 against 0); superseded",
            "decided": True,
        }
    ]
    accounts = {a["episode_id"]: a["status"] for a in data["accounts"]}
    assert accounts[never] == f"cited by {new.id}"
    assert accounts[emoji].startswith(f"left out: it taught the wording {emoji_rule.id} had")
    assert data["subject"] == "distill: +0 rules, ~0 updated, -0 retired, 1 superseded"
    assert f"Scarwarden-Rule: {change['replaced_by']}" in body(memory_repo)
    assert check_all(memory_repo.root).ok


def test_contradicting_corrections_in_one_batch_the_later_wins(memory_repo: MemoryRepo) -> None:
    early = record(
        memory_repo,
        "Always post the weekly recap on Fridays",
        ["linkedin", "recap", "schedule"],
        "2026-11-01T10:00:00Z",
        corrected_by="maria",
    )
    late = record(
        memory_repo,
        "Never post the weekly recap on Fridays",
        ["linkedin", "recap", "schedule"],
        "2026-11-05T10:00:00Z",
        corrected_by="maria",
    )
    result = distill(memory_repo, offline=True)
    (rule,) = pb.parse(memory_repo.playbook_path.read_text()).rules
    assert rule.text == "Never post the weekly recap on Fridays."
    assert rule.episode_ids == (early, late)  # both cited ...
    (flag,) = result.contradictions  # ... and flagged
    assert flag.episode_id == late and flag.decided
    assert f"reverses {early} (the same reviewer, maria), later wins" in flag.reason
    assert f"- {late} contradicts new rule" in body(memory_repo)


def test_an_unsure_contradiction_is_flagged_and_still_cited(memory_repo: MemoryRepo) -> None:
    """Re-derived for issue 25: an unsure case keeps the episode's lesson and citation
    (it was cited by no rule) and is flagged for a human."""
    first = record(
        memory_repo, "Use emoji sparingly in LinkedIn posts", ["linkedin", "emoji"], "2026-11-01T10:00:00Z"
    )
    distill(memory_repo, offline=True)
    (rule,) = pb.parse(memory_repo.playbook_path.read_text()).rules
    doubt = record(memory_repo, "Never use emoji", ["linkedin", "emoji"], "2026-11-02T10:00:00Z")
    result = distill(memory_repo, offline=True)
    book = pb.parse(memory_repo.playbook_path.read_text())
    after = book.get(rule.id)
    assert after is not None and after.episode_ids == (first,) and after.text == rule.text
    (kept,) = [r for r in book.rules if r.id != rule.id]
    assert kept.text == "Never use emoji." and kept.episode_ids == (doubt,)
    assert (doubt, f"cited by {kept.id}") in result.accounts
    assert [f.describe() for f in result.contradictions] == [
        f"{doubt} may contradict {rule.id}: opposite polarity on emoji"
    ]
    assert doubt in result.distilled  # decided: flagged for a human, not retried forever
    assert f"Scarwarden-Contradiction: {rule.id} {doubt}" in body(memory_repo)


def test_a_correction_without_words_teaches_nothing_and_is_reported(memory_repo: MemoryRepo) -> None:
    ep = record(memory_repo, "...", ["linkedin"], "2026-11-01T10:00:00Z")
    result = distill(memory_repo, offline=True)
    assert result.no_lesson == [(ep, "no lesson: the correction has no words")]
    assert result.distilled == [ep] and result.changes == []
    assert f"- {ep}: no lesson: the correction has no words" in body(memory_repo)
    assert pb.parse(memory_repo.playbook_path.read_text()).rules == ()
    assert distill(memory_repo, offline=True).new == []


def test_a_lesson_already_said_changes_no_words(memory_repo: MemoryRepo) -> None:
    record(memory_repo, "One emoji at most in LinkedIn posts", ["linkedin", "emoji"], "2026-11-01T10:00:00Z")
    distill(memory_repo, offline=True)
    (rule,) = pb.parse(memory_repo.playbook_path.read_text()).rules
    again = record(
        memory_repo, "At most one emoji in LinkedIn posts!", ["linkedin", "emoji"], "2026-11-02T10:00:00Z"
    )
    result = distill(memory_repo, offline=True)
    (change,) = result.changes
    # Issue 25: the words stay; the sentence's map gains the episode that said it again.
    assert change.kind == "update" and change.before is None and change.detail == "sentence map changed"
    assert change.lessons == ((again, f"already said by {rule.id}"),)
    after = pb.parse(memory_repo.playbook_path.read_text()).get(rule.id)
    assert after is not None and after.text == rule.text
    assert after.said()[0].episode_ids == (rule.episode_ids[0], again)


@pytest.mark.parametrize(
    "old, new, expected",
    [
        (
            "One emoji at most in LinkedIn posts.",
            "No emoji at all",
            ("clear", "a different limit on emoji (1 against 0)"),
        ),
        ("Never post on Fridays.", "Always post on Fridays", ("clear", "opposite polarity on fridays, post")),
        (
            "Open with the pain; hashtags at the end.",
            "Don't put hashtags at the end",
            ("clear", "opposite polarity on end, hashtags"),
        ),
        (
            "Send the reminder 24 hours before.",
            "Send the reminder 2 hours before",
            ("clear", "a different limit on hours (24 against 2)"),
        ),
        ("Use emoji sparingly.", "Never use emoji", ("unsure", "opposite polarity on emoji")),
        ("Never send more than one emoji.", "One emoji at most", None),  # same limit, other words
        ("Open with the pain; hashtags at the end.", "One emoji at most in LinkedIn posts", None),
        ("Never post on Fridays.", "Post the recap on Monday", None),
        (
            "Support never deletes accounts.",
            "Forward the ticket and never run deletion jobs from support",
            None,
        ),
        ("If no source exists, cut the number.", "If none exists, cut the number", None),  # conditions
        # Issue 25: a number inside an identifier is never a limit; another object is
        # another lesson; the same action on the same object reverses.
        (
            "Fix book_reservation for user mia_li_3668 (policy): set nonfree_baggages to 0 instead of 1.",
            "Fix book_reservation for user mia_li_3668 (policy): set payment_id to gift_card_6276644",
            None,
        ),
        (
            "Do not call cancel_reservation on reservation ABC123.",
            "Call cancel_reservation on reservation XYZ789",
            None,
        ),
        (
            "Do not call cancel_reservation on reservation ABC123.",
            "Call cancel_reservation on reservation ABC123",
            ("clear", "opposite polarity on call, cancel, reservation"),
        ),
        ("Lesson 8: always check the rule.", "Lesson 16: always check the rule", None),
        (
            "Reply to refund requests the same day unless it is a weekend.",
            "Never reply to refund requests the same day",
            ("unsure", "opposite polarity on day, refund, reply, requests"),
        ),
    ],
)
def test_contradiction_detector(old: str, new: str, expected: tuple[str, str] | None) -> None:
    found = claims.contradiction(old, new)
    assert (None if found is None else (found.strength, found.reason)) == expected


def test_offline_contradiction_handling_is_deterministic(memory_repo: MemoryRepo) -> None:
    record(
        memory_repo,
        "Use at most three hashtags in LinkedIn posts",
        ["linkedin", "hashtags"],
        "2026-11-01T10:00:00Z",
    )
    record(
        memory_repo, "Use two hashtags in LinkedIn posts", ["linkedin", "hashtags"], "2026-11-02T10:00:00Z"
    )
    first = distill(memory_repo, offline=True, dry_run=True)
    second = distill(memory_repo, offline=True, dry_run=True)
    assert first.after == second.after and first.message == second.message
    assert "Use two hashtags in LinkedIn posts." in first.after
    assert "three hashtags" not in first.after.split("## Retired")[0]
