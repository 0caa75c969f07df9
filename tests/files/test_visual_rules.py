"""Visual rules (issue 19): ``- Applies to: images``, parsed, rendered, and made by distillation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import git, head

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


def test_offline_distillation_marks_image_lessons_visual(
    memory_repo: MemoryRepo, make_cli, tmp_path: Path
) -> None:
    """Re-derived for issue 25: ``Applies to: images`` only from attached images (it was
    from words, and "resolution" in a correction made a rule visual)."""
    from test_media import png

    cli = make_cli(memory_repo.root)
    image = tmp_path / "banner.png"
    image.write_bytes(png())
    for task, attach in (("Beta launch banner", ["--attach", str(image)]), ("Summer sale banner", [])):
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
            *attach,
        )
        assert out.exit_code == 0, out.output
    out = cli(
        "episode",
        "add",
        "--task",
        "Poster",
        "--correction",
        "Print the poster at a higher resolution",
        "--tag",
        "poster",
    )
    assert out.exit_code == 0
    assert cli("distill", "--offline").exit_code == 0
    book = pb.parse(memory_repo.playbook_path.read_text())
    visual = [r for r in book.rules if r.visual]
    assert len(visual) == 1 and "logo" in visual[0].text.lower()
    assert not any(r.visual for r in book.rules if "resolution" in r.text)
    assert "- Applies to: images" in memory_repo.playbook_path.read_text()


def test_rule_add_applies_to_images_makes_a_visual_rule(
    memory_repo: MemoryRepo, make_cli, tmp_path: Path
) -> None:
    cli = make_cli(memory_repo.root)
    ep = cli("episode", "add", "--task", "Beta banner", "--correction", "The logo was cropped").stdout.strip()
    before = head(memory_repo)
    bad = cli("rule", "add", "--text", "Keep the logo whole.", "--cites", ep, "--applies-to", "video")
    assert bad.exit_code == 2 and "'video' is not 'images'" in bad.output and "Traceback" not in bad.output
    assert head(memory_repo) == before and git(memory_repo.root, "status", "--porcelain").stdout == ""
    out = cli(
        "rule", "add", "--text", "Keep the logo whole.", "--cites", ep, "--applies-to", "images", "--json"
    )
    assert out.exit_code == 0, out.output
    rule = json.loads(out.stdout)
    assert rule["applies_to"] == ["images"] and rule["episode_ids"] == [ep]
    added = pb.parse(memory_repo.playbook_path.read_text()).get(rule["id"])
    assert added is not None and added.visual
    assert f"- Learnt in: {ep}\n- Applies to: images\n" in memory_repo.playbook_path.read_text()
    assert git(memory_repo.root, "status", "--porcelain").stdout == ""  # committed
    # The index carries the mark: rule show and rule list say the rule is visual.
    assert "  applies to: images" in cli("rule", "show", rule["id"]).stdout
    listed = json.loads(cli("rule", "list", "--json").stdout)
    assert [r.get("applies_to") for r in listed] == [["images"]]
    # audit-image sends it for any task, even one that shares no word with it.
    png = tmp_path / "card.png"
    png.write_bytes(
        bytes.fromhex(
            "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
            "1f15c4890000000d49444154789c63f8cfc0f01f0005000201a7d6b1f2"
            "0000000049454e44ae426082"
        )
    )
    audit = cli("audit-image", str(png), "--task", "Quarterly webinar", env={"SCARWARDEN_API_KEY": ""})
    assert audit.exit_code == 0, audit.output
    assert f"[{rule['id']}, learnt in {ep}] Keep the logo whole (visual)" in audit.stdout
    assert "No image was judged" in audit.stderr
