"""Personal data in a human's answer under ``privacy:`` (docs/privacy.md): ``warn``
records it and says so at every door, as ``episode add`` does; ``refuse`` writes nothing.

``record_human_answer`` and ``record_confirmation`` passed no ``warn`` to the ledger, so
``ask --answer``, ``ask --confirm`` and the Python API recorded a card number or an
e-mail address under ``warn`` without a word."""

from __future__ import annotations

import json

from conftest import git, head
from helpers import CARD, EMAIL, set_privacy

from scarwarden.api import Memory
from scarwarden.repo import MemoryRepo

BERLIN = "Book travel for the Berlin conference"
DINNER = "Book a table for the team dinner"


def test_ask_answer_says_the_privacy_warnings_as_episode_add_does(cli, demo_repo: MemoryRepo) -> None:
    set_privacy(demo_repo, email="warn", card="warn")
    answer = f"Pay with the team card {CARD} and send the receipt to {EMAIL}"
    result = cli("ask", BERLIN, "--answer", answer)
    assert result.exit_code == 0, result.output
    ep_id = result.stdout.strip()
    said = result.stderr
    assert (
        f"warning: human answer ({ep_id}): field 'correction': holds personal data: a payment card "
        "number (privacy.card: warn)" in said
    )
    assert "an email address (privacy.email: warn)" in said
    assert CARD not in said and EMAIL not in said  # named by kind, never by value
    assert "Recorded and committed the answer" in said
    # The same words as episode add's for the same text.
    added = cli("episode", "add", "--task", BERLIN, "--correction", answer)
    assert "'correction': holds personal data: a payment card number (privacy.card: warn)" in added.stderr


def test_ask_answer_json_carries_the_warnings_in_a_field(cli, demo_repo: MemoryRepo) -> None:
    set_privacy(demo_repo, email="warn")
    result = cli("ask", "--json", BERLIN, "--answer", f"Ask {EMAIL} first")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    (warning,) = data["warnings"]
    assert warning["field"] == "correction"
    assert warning["message"] == "holds personal data: an email address (privacy.email: warn)"
    assert warning["file"] == f"human answer ({data['episode']['id']})"
    assert "warning: human answer" in result.stderr
    # Nothing to warn about: an empty list, not a missing field.
    clean = json.loads(cli("ask", "--json", "Pick the offsite venue", "--answer", "A lake").stdout)
    assert clean["warnings"] == [] and clean["episode"] is not None


def test_ask_confirm_says_the_privacy_warnings(cli, demo_repo: MemoryRepo) -> None:
    """The default settings (``privacy.card: warn``): a card number in the task."""
    task = f"{DINNER}, paid with card {CARD}"
    result = cli("ask", task, "--confirm", "PB-06")
    assert result.exit_code == 0, result.output
    assert "field 'task': holds personal data: a payment card number (privacy.card: warn)" in result.stderr
    data = json.loads(cli("ask", "--json", task, "--confirm", "PB-06").stdout)
    assert [w["field"] for w in data["warnings"]][:1] == ["task"]
    assert data["confirmed"] == "PB-06"


def test_ask_answer_refused_by_privacy_writes_nothing(cli, demo_repo: MemoryRepo) -> None:
    set_privacy(demo_repo, email="refuse")
    before = head(demo_repo)
    result = cli("ask", BERLIN, "--answer", f"Ask {EMAIL} first")
    assert result.exit_code == 1
    assert "refused, it holds personal data; nothing was written" in result.stderr
    assert EMAIL not in result.stderr
    assert head(demo_repo) == before and git(demo_repo.root, "status", "--porcelain").stdout == ""


def test_a_refused_answer_is_hinted_in_words_the_door_has(cli, demo_repo: MemoryRepo) -> None:
    """The refusal hinted "record it with --redact-pii (typed placeholders)", an option
    of episode add that ask has not (nor MCP's tools, nor the web's forms)."""
    set_privacy(demo_repo, email="refuse", card="refuse")
    answered = cli("ask", BERLIN, "--answer", f"Ask {EMAIL} first")
    confirmed = cli("ask", f"{DINNER}, paid with card {CARD}", "--confirm", "PB-06")
    for result in (answered, confirmed):
        assert result.exit_code == 1 and "refused, it holds personal data" in result.stderr
        assert "--redact-pii" not in result.stderr
        assert "a placeholder such as [email] or [card]" in result.stderr


def test_a_warning_is_hinted_in_words_the_door_has(cli, demo_repo: MemoryRepo) -> None:
    """A warning kept episode add's hint "record it with --redact-pii (typed
    placeholders), or take it out" at ask and answer, which have no --redact-pii (nor
    MCP's tools, nor the web's forms): it now gives the refusal's hint for these doors."""
    set_privacy(demo_repo, email="warn", card="warn")
    answered = cli("ask", BERLIN, "--answer", f"Ask {EMAIL} first")
    confirmed = cli("ask", f"{DINNER}, paid with card {CARD}", "--confirm", "PB-06")
    answer_door = cli("answer", "Pick the offsite venue", "--answer", f"Ask {EMAIL} first")
    as_json = cli("ask", "--json", "Plan the summer party", "--answer", f"Ask {EMAIL} first")
    for result in (answered, confirmed, answer_door, as_json):
        assert result.exit_code == 0, result.output
        assert "warning: human " in result.stderr and "holds personal data" in result.stderr
        assert "--redact-pii" not in result.stderr, result.stderr
        assert "a placeholder such as [email] or [card]" in result.stderr
    assert "--redact-pii" not in json.loads(as_json.stdout)["warnings"][0]["hint"]


def test_the_api_returns_the_warnings_of_an_answer_and_a_confirmation(demo_repo: MemoryRepo) -> None:
    memory = Memory(set_privacy(demo_repo, email="warn", card="warn"))
    recorded = memory.answer(BERLIN, f"Send the tickets to {EMAIL}")
    (warning,) = recorded.warnings
    assert warning.field == "correction" and "an email address (privacy.email: warn)" in warning.message
    assert recorded.to_json()["warnings"] == [warning.to_json()]
    confirmed, rule_id = memory.confirm(f"{DINNER}, paid with card {CARD}", "PB-06")
    assert rule_id == "PB-06" and "task" in [w.field for w in confirmed.warnings]
    assert memory.answer("Pick the offsite venue", "A lake").warnings == ()


def test_the_api_record_returns_its_warnings_and_a_batch_each_its_own(demo_repo: MemoryRepo) -> None:
    """Memory.record took no ``warn``: its Recorded now lists what privacy warned about;
    record_batch gives each episode its own and still calls ``warn``."""
    memory = Memory(set_privacy(demo_repo, email="warn"))
    recorded = memory.record(BERLIN, outcome=f"Mailed {EMAIL}")
    assert [w.field for w in recorded.warnings] == ["outcome"]
    said: list[object] = []
    batch = memory.record_batch(
        [{"task": BERLIN, "outcome": "Booked"}, {"task": DINNER, "correction": f"Ask {EMAIL}"}],
        warn=said.append,
    )
    assert batch[0].warnings == () and [w.field for w in batch[1].warnings] == ["correction"]
    assert said == list(batch[1].warnings)
