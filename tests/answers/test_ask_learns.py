"""The human's answer is never thrown away (issue 13): ``ask --answer`` records on
ACT_AND_FLAG, and on ACT with --force, referring to the recalled rules; after distill the
same task and a reworded one are answered from memory."""

from __future__ import annotations

import json

import pytest
from conftest import git, head

from scarwarden.agents.mcp.tools import MemoryTools
from scarwarden.distill import distill
from scarwarden.files import playbook as pb
from scarwarden.index import open_index
from scarwarden.recall.engine import recall_task
from scarwarden.repo import MemoryRepo

FLAGGED = "Reply to a customer about a refund"  # a weak match on the demo memory
LINKEDIN = "Draft a LinkedIn post announcing our beta"  # ACT on the demo memory


def _episode(repo: MemoryRepo, ep_id: str) -> dict:
    with open_index(repo) as index:
        episode = index.get_episode(ep_id)
    assert episode is not None
    return episode.to_json()


def test_answer_on_act_and_flag_is_recorded_with_refs_to_the_recalled_rules(cli, demo_repo) -> None:
    data = json.loads(
        cli("ask", "--json", FLAGGED, "--answer", "Thank them and link the refund policy").stdout
    )
    assert data["verdict"] == "ACT_AND_FLAG"
    episode = data["episode"]
    assert episode is not None and episode["source"] == "human-answer"
    cited = [ep for rule in data["rules"] for ep in rule["episode_ids"]]
    assert episode["refs"] == list(dict.fromkeys(cited))
    assert episode["correction"] == "Thank them and link the refund policy"
    assert git(demo_repo.root, "log", "-1", "--format=%B").stdout.count(episode["id"])


def test_answer_on_act_needs_force(cli, demo_repo: MemoryRepo) -> None:
    before = head(demo_repo)
    refused = cli("ask", LINKEDIN, "--answer", "Use our brand template")
    assert refused.exit_code == 0
    assert "--answer was not recorded (add --force to record it anyway)" in refused.stderr
    assert head(demo_repo) == before
    forced = cli("ask", "--json", "--force", LINKEDIN, "--answer", "Use our brand template")
    data = json.loads(forced.stdout)
    assert data["verdict"] == "ACT" and data["episode"]["refs"][:1] == data["rules"][0]["episode_ids"][:1]
    assert head(demo_repo) != before


def test_mcp_answer_refers_to_what_recall_returns(demo_repo: MemoryRepo) -> None:
    tools = MemoryTools(demo_repo)
    rules = recall_task(demo_repo, FLAGGED, log=False).rules
    made = tools.ask_human_answer(FLAGGED, "Thank them and link the refund policy")
    episode = _episode(demo_repo, made["id"])
    assert episode["refs"] == list(dict.fromkeys(ep for r in rules for ep in r.episode_ids))[:20]


def test_web_form_is_offered_on_a_weak_match(demo_repo: MemoryRepo) -> None:
    pytest.importorskip("flask")
    from scarwarden.audit.web.app import create_app

    app = create_app(demo_repo.root, csrf_token="t", allowed_hosts={"localhost"})
    page = (
        app.test_client()
        .get("/task", query_string={"task": FLAGGED, "memory": "with"})
        .get_data(as_text=True)
    )
    assert "Weak match: what should the agent do?" in page and 'name="answer"' in page


CANARY = pb.make_rule(
    "PB-01",
    "Canary before production",
    "Every deploy to production goes to a canary first for one hour.",
    ["deploy", "canary", "production"],
    ["ep-canary00001"],
)


def test_asked_once_known_after_in_other_words_too(make_cli, memory_repo: MemoryRepo) -> None:
    from helpers import write_episode

    write_episode(memory_repo, "ep-canary00001", task="Deploy the API", correction="Canary first")
    memory_repo.playbook_path.write_text(pb.render(pb.Playbook(rules=(CANARY,))))
    git(memory_repo.root, "add", "-A")
    git(memory_repo.root, "commit", "-q", "--no-verify", "-m", "memory")
    task = "Rename the production Kafka topic"
    first = json.loads(make_cli(memory_repo.root)("ask", "--json", task, "--answer", "x").stdout)
    assert first["verdict"] == "ASK_HUMAN"  # one shared word ("production") of four
    answer = "Announce the Kafka topic rename to consumers a week ahead and mirror the old topic"
    asked = json.loads(
        make_cli(memory_repo.root)(
            "ask", "--json", "Rename the Kafka topic for orders", "--answer", answer
        ).stdout
    )
    assert asked["episode"] is not None
    distill(memory_repo, offline=True)
    episode = asked["episode"]["id"]
    for words in ("Rename the Kafka topic for orders", "Can we rename a Kafka topic?"):
        again = recall_task(memory_repo, words, log=False)
        assert again.verdict != "ASK_HUMAN", words
        assert episode in again.rules[0].episode_ids, words
