"""``audit-image`` (issue 19) against the local fake chat-completions server."""

from __future__ import annotations

import base64
import hashlib
import io
import json
from pathlib import Path

import pytest
from conftest import git, head
from fakellm import reply_json

from scarwarden.repo import MemoryRepo

PIL = pytest.importorskip("PIL.Image")


def png_bytes(size: tuple[int, int] = (60, 40), colour: str = "red") -> bytes:
    out = io.BytesIO()
    PIL.new("RGB", size, colour).save(out, "PNG")
    return out.getvalue()


@pytest.fixture
def visual(memory_repo: MemoryRepo, make_cli, tmp_path: Path) -> tuple[MemoryRepo, object, Path, str]:
    """A memory with one visual rule (PB-01) and one task rule (PB-02), and an image."""
    root = memory_repo.root
    cli = make_cli(root)
    shot = tmp_path / "old.png"
    shot.write_bytes(png_bytes(colour="blue"))
    out = cli(
        "episode",
        "add",
        "--task",
        "Beta banner",
        "--correction",
        "The logo was cropped",
        "--attach",
        str(shot),
    )
    ep_logo = out.stdout.strip()
    out = cli("episode", "add", "--task", "Webinar invite card", "--correction", "Always give the timezone")
    ep_time = out.stdout.strip()
    playbook = root / "memory/playbook.md"
    playbook.write_text(
        playbook.read_text()
        + f"\n## PB-01: Keep the logo whole\n\nNever crop the logo.\n\n- Tags: logo\n- Learnt in: {ep_logo}\n"
        "- Applies to: images\n"
        f"\n## PB-02: Give the webinar timezone\n\nEvery webinar invite states its timezone.\n\n"
        f"- Tags: webinar, timezone, invite\n- Learnt in: {ep_time}\n"
    )
    git(root, "commit", "-q", "-m", "rules", "--", "memory/playbook.md")
    image = tmp_path / "card.png"
    image.write_bytes(png_bytes())
    return memory_repo, cli, image, ep_logo


def verdicts(*items: tuple[str, str]) -> dict[str, object]:
    return reply_json(
        {
            "verdicts": [
                {"rule": r, "verdict": v, "reason": f"{r} is {v}", "evidence": "top left"} for r, v in items
            ]
        }
    )


def test_the_request_carries_the_image_rules_and_citations(visual, fake_llm) -> None:
    repo, cli, image, ep_logo = visual
    fake_llm.script(verdicts(("PB-01", "violates"), ("PB-02", "pass")))
    result = cli("audit-image", str(image), "--task", "Webinar invite card for the timezone launch", "--json")
    assert result.exit_code == 0, result.output
    body = fake_llm.bodies()[0]
    assert body["model"] == "qwen3-vl-plus"
    parts = body["messages"][1]["content"]
    url = next(p["image_url"]["url"] for p in parts if p["type"] == "image_url")
    assert url == "data:image/png;base64," + base64.b64encode(image.read_bytes()).decode()
    text = next(p["text"] for p in parts if p["type"] == "text")
    assert "PB-01: Keep the logo whole" in text and f"(learnt in {ep_logo})" in text
    assert "PB-02: Give the webinar timezone" in text
    data = json.loads(result.stdout)
    assert data["judged"] and data["violations"] == 1
    assert data["verdicts"][0] == {
        "rule": "PB-01",
        "verdict": "violates",
        "reason": "PB-01 is violates",
        "evidence": "top left",
        "citation": f"[PB-01, learnt in {ep_logo}]",
    }
    assert data["usage"]["calls"] == 1 and data["usage"]["total_tokens"] == 120


def test_strict_fails_on_a_violation_and_prints_the_citation(visual, fake_llm) -> None:
    _repo, cli, image, ep_logo = visual
    fake_llm.script(verdicts(("PB-01", "violates")))
    result = cli("audit-image", str(image), "--task", "Beta banner", "--strict")
    assert result.exit_code == 1
    assert f"VIOLATES  [PB-01, learnt in {ep_logo}] Keep the logo whole" in result.stdout
    assert "violates 1 rule(s) (--strict): PB-01" in result.stderr
    fake_llm.script(verdicts(("PB-01", "pass")))
    assert cli("audit-image", str(image), "--task", "Beta banner", "--strict").exit_code == 0


def test_an_invented_rule_is_repaired_once_then_refused(visual, fake_llm) -> None:
    _repo, cli, image, _ep = visual
    fake_llm.script(verdicts(("PB-99", "pass")), verdicts(("PB-01", "unclear")))
    result = cli("audit-image", str(image), "--task", "Beta banner", "--json")
    assert result.exit_code == 0
    repair = fake_llm.bodies()[1]["messages"][-1]["content"]
    assert "'PB-99', which is not one of the rules given" in repair
    assert json.loads(result.stdout)["verdicts"][0]["verdict"] == "unclear"
    fake_llm.script(verdicts(("PB-99", "pass")), "not json at all")
    result = cli("audit-image", str(image), "--task", "Beta banner")
    assert result.exit_code == 5 and "even after one repair attempt" in result.stderr
    assert "Traceback" not in result.output
    # A sentence: it said "the model's verdicts was not the JSON asked for".
    assert "error: the model's list of verdicts was not the JSON asked for" in result.stderr
    repair = fake_llm.bodies()[-1]["messages"][-1]["content"]
    assert "with only the list of verdicts as one JSON object" in repair


def test_malformed_verdicts_and_a_skipped_rule(visual, fake_llm) -> None:
    _repo, cli, image, _ep = visual
    bad = reply_json({"verdicts": [{"rule": "PB-01", "verdict": "maybe", "reason": "x"}]})
    fake_llm.script(bad, reply_json({"verdicts": []}))
    result = cli("audit-image", str(image), "--task", "Beta banner", "--json")
    assert result.exit_code == 0
    assert "must be pass, violates or unclear" in fake_llm.bodies()[1]["messages"][-1]["content"]
    [verdict] = json.loads(result.stdout)["verdicts"]
    assert verdict["verdict"] == "unclear" and "no verdict" in verdict["reason"]


def test_without_a_model_it_lists_the_rules_and_judges_nothing(visual, monkeypatch) -> None:
    for var in ("SCARWARDEN_API_KEY", "DASHSCOPE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    _repo, cli, image, ep_logo = visual
    result = cli("audit-image", str(image), "--task", "Beta banner")
    assert result.exit_code == 0
    assert f"[PB-01, learnt in {ep_logo}] Keep the logo whole (visual+task)" in result.stdout
    assert "No image was judged" in result.stderr
    data = json.loads(cli("audit-image", str(image), "--task", "Beta banner", "--json").stdout)
    assert (
        data["judged"] is False and data["verdicts"] == [] and data["note"].startswith("No image was judged")
    )
    assert cli("audit-image", str(image), "--task", "Beta banner", "--strict").exit_code == 4


def test_a_big_image_is_resized_before_sending(visual, fake_llm, tmp_path: Path) -> None:
    repo, cli, _image, _ep = visual
    noise = PIL.effect_noise((3000, 2000), 80).convert("RGB")
    out = io.BytesIO()
    noise.save(out, "PNG")
    big = tmp_path / "photo.png"
    big.write_bytes(out.getvalue())
    assert big.stat().st_size > 1024 * 1024
    fake_llm.script(verdicts(("PB-01", "pass")))
    data = json.loads(cli("audit-image", str(big), "--task", "Beta banner", "--json").stdout)
    assert data["sent"]["resized"] and data["sent"]["bytes"] <= 1024 * 1024
    assert max(data["sent"]["width"], data["sent"]["height"]) <= 1568
    url = fake_llm.bodies()[0]["messages"][1]["content"][1]["image_url"]["url"]
    assert url.startswith("data:image/jpeg;base64,")


def test_record_makes_an_episode_with_the_image_attached(visual, fake_llm) -> None:
    repo, cli, image, _ep = visual
    before = head(repo.root)
    fake_llm.script(verdicts(("PB-01", "violates")))
    data = json.loads(cli("audit-image", str(image), "--task", "Beta banner", "--record", "--json").stdout)
    assert data["recorded"] and head(repo.root) != before
    sha = hashlib.sha256(image.read_bytes()).hexdigest()
    shown = json.loads(cli("episode", "show", data["recorded"], "--json").stdout)
    assert f"sha256:{sha}" in json.dumps(shown) and "PB-01 violates" in json.dumps(shown)
    assert (repo.root / f"memory/media/{sha}.png").read_bytes() == image.read_bytes()


def test_the_vision_model_follows_the_preset_and_the_environment() -> None:
    from scarwarden.config import parse_config

    assert parse_config({}, environ={}).model.vision_model == "qwen3-vl-plus"
    assert parse_config({"model": {"provider": "openai"}}, environ={}).model.vision_model == "gpt-4.1-mini"
    env = {"SCARWARDEN_MODEL_VISION": "my-vl"}
    assert parse_config({"model": {"provider": "openai"}}, environ=env).model.vision_model == "my-vl"


def test_a_provider_without_a_vision_model_judges_nothing(visual, fake_llm) -> None:
    repo, cli, image, ep_logo = visual
    (repo.root / "scarwarden.yaml").write_text("model:\n  provider: deepseek\n")
    result = cli("audit-image", str(image), "--task", "Beta banner")
    assert result.exit_code == 0, result.output
    assert f"[PB-01, learnt in {ep_logo}] Keep the logo whole" in result.stdout
    assert "No image was judged" in result.stderr and "has no vision model" in result.stderr
    strict = cli("audit-image", str(image), "--task", "Beta banner", "--strict")
    assert strict.exit_code == 4 and "model.vision_model" in strict.stderr
    assert fake_llm.requests == []  # no image went to a text-only model


def test_a_verdict_text_that_cannot_be_stored_is_repaired_then_a_model_error(visual, fake_llm) -> None:
    """A reason holding ESC (or evidence holding NUL) went to the terminal as it was, and
    with --record failed as exit 1 "audit-image: invalid episode input ... remove it":
    the model's text, sent back in the repair request now."""
    repo, cli, image, _ep = visual
    before = head(repo.root)
    bad = reply_json({"verdicts": [{"rule": "PB-01", "verdict": "violates", "reason": "cut\x1b[2J"}]})
    nul = reply_json(
        {"verdicts": [{"rule": "PB-01", "verdict": "pass", "reason": "ok", "evidence": "a\x00"}]}
    )
    fake_llm.script(bad, nul)
    result = cli("audit-image", str(image), "--task", "Beta banner", "--record")
    assert result.exit_code == 5, result.output
    assert "even after one repair attempt" in result.stderr and "remove it" not in result.stderr
    assert '"evidence" holds a NUL character (U+0000) at character 2' in result.stderr
    repair = fake_llm.bodies()[1]["messages"][-1]["content"]
    assert 'verdict 1 (PB-01): "reason" holds an escape character (U+001B) at character 4' in repair
    assert head(repo.root) == before
    assert git(repo.root, "status", "--porcelain", "--untracked-files=all").stdout == ""
    fake_llm.script(bad, verdicts(("PB-01", "violates")))
    result = cli("audit-image", str(image), "--task", "Beta banner", "--record")
    assert result.exit_code == 0 and head(repo.root) != before


def test_record_says_the_privacy_warnings(visual, fake_llm) -> None:
    """``--record`` stores the audit as an episode through the ledger, which passed no
    ``warn``: a task holding personal data ``privacy:`` warns about (the default
    ``privacy.card: warn``) was recorded without a word, as ``episode add`` would say it."""
    repo, cli, image, _ep = visual
    fake_llm.script(verdicts(("PB-01", "violates")))
    task = "Beta banner for the card 4111 1111 1111 1111 promo"
    result = cli("audit-image", str(image), "--task", task, "--record")
    assert "Recorded as ep-" in result.stderr, result.output
    assert "field 'task': holds personal data: a payment card number (privacy.card: warn)" in result.stderr
    assert "4111" not in result.stderr


def test_without_a_model_the_hint_hides_a_password_in_base_url(visual, monkeypatch) -> None:
    """model.base_url with ``user:password@``: the hint names the server, never the password."""
    for var in ("SCARWARDEN_API_KEY", "DASHSCOPE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("SCARWARDEN_BASE_URL", "https://bob:s3cretPW@llm.internal/v1")
    _repo, cli, image, _ep = visual
    result = cli("audit-image", str(image), "--task", "Beta banner", "--strict")
    assert result.exit_code == 4
    assert "s3cretPW" not in result.output + result.stderr
    assert "https://bob:***@llm.internal/v1" in result.stderr
