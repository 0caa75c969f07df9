"""``scarwarden answer --answer`` on ASK_HUMAN is a human-answer door too: personal data
``privacy:`` sets to ``warn`` is recorded and said on stderr, as ``episode add`` and
``ask --answer`` say it (it was recorded without a word)."""

from __future__ import annotations

import json

from conftest import git

from scarwarden.repo import MemoryRepo

BERLIN = "Book travel for the Berlin conference"
EMAIL = "jane@acme.io"


def test_answer_says_the_privacy_warnings_of_the_human_answer(cli, demo_repo: MemoryRepo) -> None:
    (demo_repo.root / "scarwarden.yaml").write_text("privacy:\n  email: warn\n", encoding="utf-8")
    git(demo_repo.root, "add", "scarwarden.yaml")
    git(demo_repo.root, "commit", "-q", "--no-gpg-sign", "-m", "privacy settings")
    result = cli("answer", BERLIN, "--answer", f"Ask {EMAIL} first")
    assert result.exit_code == 0, result.output
    said = "field 'correction': holds personal data: an email address (privacy.email: warn)"
    assert "warning: human answer (ep-" in result.stderr and said in result.stderr
    assert EMAIL not in result.stderr
    as_json = cli("answer", "--json", BERLIN, "--answer", f"Mail {EMAIL} the plan")
    assert as_json.exit_code == 0 and json.loads(as_json.stdout)["recorded_episode"]
    assert said in as_json.stderr


def test_feedback_says_the_privacy_warnings(cli, demo_repo: MemoryRepo) -> None:
    """``feedback --correction`` (a human's words, like an answer) recorded personal data
    under ``warn`` without a word."""
    (demo_repo.root / "scarwarden.yaml").write_text("privacy:\n  email: warn\n", encoding="utf-8")
    git(demo_repo.root, "add", "scarwarden.yaml")
    git(demo_repo.root, "commit", "-q", "--no-gpg-sign", "-m", "privacy settings")
    fed = cli("feedback", "ep-hkgnqdz88f", "--correction", f"Copy {EMAIL} next time")
    assert fed.exit_code == 0, fed.output
    said = f"warning: feedback ({fed.stdout.strip()}): field 'correction': holds personal data: an email"
    assert said in fed.stderr and EMAIL not in fed.stderr


def test_feedback_is_hinted_in_words_it_has(cli, demo_repo: MemoryRepo) -> None:
    """feedback's refusal and warning of personal data hinted "record it with
    --redact-pii (typed placeholders)", an option feedback has not (nor MCP's tool)."""
    (demo_repo.root / "scarwarden.yaml").write_text("privacy:\n  email: refuse\n  card: warn\n")
    git(demo_repo.root, "add", "scarwarden.yaml")
    git(demo_repo.root, "commit", "-q", "--no-gpg-sign", "-m", "privacy settings")
    refused = cli("feedback", "ep-hkgnqdz88f", "--correction", f"Copy {EMAIL} next time")
    assert refused.exit_code == 1 and "feedback: refused, it holds personal data" in refused.stderr
    warned = cli("feedback", "ep-hkgnqdz88f", "--outcome", "Paid with 4111 1111 1111 1111")
    assert warned.exit_code == 0 and "warning: feedback (ep-" in warned.stderr
    for result in (refused, warned):
        assert "--redact-pii" not in result.stderr, result.stderr
        assert "a placeholder such as [email] or [card]" in result.stderr


def test_answer_record_says_the_privacy_warnings(cli, demo_repo: MemoryRepo, fake_llm) -> None:
    """``answer --record`` (the model's answer, recorded as an episode) recorded personal
    data under ``warn`` without a word too."""
    from scarwarden.answers.citations import format_citation
    from scarwarden.files.playbook_edit import load_playbook

    (demo_repo.root / "scarwarden.yaml").write_text("privacy:\n  email: warn\n", encoding="utf-8")
    git(demo_repo.root, "add", "scarwarden.yaml")
    git(demo_repo.root, "commit", "-q", "--no-gpg-sign", "-m", "privacy settings")
    pb01 = load_playbook(demo_repo).get("PB-01")
    assert pb01 is not None
    fake_llm.script(f"Write to {EMAIL} for the beta. {format_citation(pb01.id, pb01.episode_ids)}")
    recorded = cli("answer", "Draft a LinkedIn post announcing our beta", "--record")
    assert recorded.exit_code == 0, recorded.output
    assert "field 'action': holds personal data: an email address (privacy.email: warn)" in recorded.stderr
