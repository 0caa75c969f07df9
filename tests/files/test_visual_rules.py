"""Visual rules (issue 19): ``- Applies to: images``, parsed, rendered, and made by distillation."""

from __future__ import annotations

import pytest

from scarwarden.distill.visual import is_visual
from scarwarden.errors import ValidationError
from scarwarden.files import playbook as pb
from scarwarden.repo import MemoryRepo

BOOK = """# Playbook

## PB-01: Keep the logo whole

Never crop the logo in a banner.

- Tags: logo, banner
- Learnt in: ep-abc123
- Applies to: images

## Retired

### PB-02: Put text over the photo

Text over the photo draws the eye.

- Tags: photo
- Learnt in: ep-abc123
- Applies to: images
- Retired: text over the face
"""


def test_applies_to_round_trips_and_is_in_json() -> None:
    book = pb.parse(BOOK)
    assert pb.render(book) == BOOK
    assert book.rules[0].visual and book.retired[0].visual
    assert book.rules[0].to_json()["applies_to"] == ["images"]
    plain = pb.make_rule("PB-03", "Lead with the pain", "Lead with the pain.", ["post"], ["ep-abc123"])
    assert not plain.visual and "applies_to" not in plain.to_json()
    assert "Applies to" not in pb.render(pb.Playbook((plain,)))


def test_an_unknown_applies_to_is_refused_with_its_line() -> None:
    with pytest.raises(ValidationError) as caught:
        pb.parse(BOOK.replace("- Applies to: images\n\n## Retired", "- Applies to: video\n\n## Retired"))
    [problem] = caught.value.problems
    assert problem.line == 9 and problem.field == "Applies to" and "'video'" in problem.message
    with pytest.raises(ValidationError):
        pb.make_rule("PB-03", "t", "text", [], ["ep-abc123"], applies_to=["video"])


@pytest.mark.parametrize(
    ("lesson", "visual"),
    [
        ("The logo was cropped", True),
        ("Never put text over the face", True),
        ("The brand colour was wrong", True),
        ("Lead with the reader's pain", False),
        ("Never share discount codes", False),
    ],
)
def test_the_word_list(lesson: str, visual: bool) -> None:
    assert is_visual(lesson) is visual


def test_offline_distillation_marks_image_lessons_visual(memory_repo: MemoryRepo, make_cli) -> None:
    cli = make_cli(memory_repo.root)
    for task in ("Beta launch banner", "Summer sale banner"):
        out = cli(
            "episode",
            "add",
            "--task",
            task,
            "--correction",
            "The logo was cropped at the edge",
            "--tag",
            "banner",
            "--tag",
            "logo",
        )
        assert out.exit_code == 0, out.output
    out = cli(
        "episode",
        "add",
        "--task",
        "Webinar invite",
        "--correction",
        "Always give the timezone",
        "--tag",
        "webinar",
    )
    assert out.exit_code == 0
    assert cli("distill", "--offline").exit_code == 0
    book = pb.parse(memory_repo.playbook_path.read_text())
    visual = [r for r in book.rules if r.visual]
    assert len(visual) == 1 and "logo" in visual[0].text.lower()
    assert any("timezone" in r.text.lower() and not r.visual for r in book.rules)
    assert "- Applies to: images" in memory_repo.playbook_path.read_text()
