"""Recall that learns from its own ledger (issue 13): rules found through the words of
the episodes that taught them, words every past task says weighed down, and a router
that needs real evidence on small memories."""

from __future__ import annotations

import json

from conftest import git
from helpers import write_episode, write_playbook

from scarwarden.files import playbook as pb
from scarwarden.index import open_index
from scarwarden.recall.engine import recall, recall_task
from scarwarden.recall.explain import explain_data, explain_lines
from scarwarden.recall.router import ACT, ACT_AND_FLAG, ASK_HUMAN
from scarwarden.repo import MemoryRepo

LINKEDIN = (
    "PB-01",
    "Lead LinkedIn posts with the reader's pain",
    "Open every LinkedIn post with the problem the reader has, then the announcement.",
    ["linkedin", "post", "announcement"],
)
CANARY = (
    "PB-02",
    "Canary before production",
    "Every deploy to production goes to a canary first for one hour.",
    ["deploy", "canary", "production"],
)
OUTAGE = (
    "PB-03",
    "Email customers about outages",
    "Send an email to every affected customer within an hour of an outage, with the status page link.",
    ["outage", "email", "customer"],
)


def _memory(
    repo: MemoryRepo, rules: list[tuple[str, str, str, list[str]]], episodes: dict[str, dict[str, str]]
) -> None:
    """Write the rules (each citing its own episode) and the episodes, and commit."""
    for ep_id, fields in episodes.items():
        write_episode(repo, ep_id, **fields)
    book = pb.Playbook(
        rules=tuple(
            pb.make_rule(i, t, x, tags, [f"ep-{i.lower().replace('-', '')}aaaaa"]) for i, t, x, tags in rules
        )
    )
    repo.playbook_path.write_text(pb.render(book))
    git(repo.root, "add", "-A")
    git(repo.root, "commit", "-q", "--no-verify", "-m", "memory")


def _eps(
    *rules: tuple[str, str, str, list[str]], tasks: dict[str, str] | None = None
) -> dict[str, dict[str, str]]:
    out = {}
    for rule in rules:
        ep = f"ep-{rule[0].lower().replace('-', '')}aaaaa"
        out[ep] = {"task": (tasks or {}).get(rule[0], rule[1]), "correction": rule[2]}
    return out


def test_one_generic_tag_never_acts_on_a_small_memory(memory_repo: MemoryRepo) -> None:
    for rules in ([LINKEDIN], [LINKEDIN, CANARY], [LINKEDIN, CANARY, OUTAGE]):
        write_playbook(memory_repo, rules)
        res = recall_task(memory_repo, "Post a job ad", log=False)
        assert res.verdict != ACT, (len(rules), res.stats and res.stats.best_evidence)
        assert res.stats is not None and res.stats.best_evidence <= 1.0


def test_a_single_shared_word_asks_the_human(memory_repo: MemoryRepo) -> None:
    write_playbook(memory_repo, [LINKEDIN, CANARY, OUTAGE])
    res = recall_task(memory_repo, "Rename the production Kafka topic", log=False)
    assert res.verdict == ASK_HUMAN
    assert res.stats is not None and res.stats.best is not None and res.stats.best.id == "PB-02"
    assert res.stats.best_matched_words == 1
    with open_index(memory_repo) as index:
        lines = "\n".join(explain_lines(recall(index, "Rename the production Kafka topic")))
    assert "matches 1 of the task's 4 words" in lines
    # The same word with another of the rule's words is a supported match.
    assert recall_task(memory_repo, "Deploy the canary to production", log=False).verdict == ACT


def test_a_rule_is_found_through_the_words_of_its_episodes(memory_repo: MemoryRepo) -> None:
    eps = _eps(
        LINKEDIN,
        CANARY,
        OUTAGE,
        tasks={"PB-03": "Tell clients about yesterday's downtime by mail"},
    )
    _memory(memory_repo, [LINKEDIN, CANARY, OUTAGE], eps)
    task = "Mail our clients about the downtime"
    with open_index(memory_repo) as index:
        res = recall(index, task)
        data = explain_data(res)
        lines = "\n".join(explain_lines(res))
    assert res.verdict in (ACT, ACT_AND_FLAG)
    top = res.rules[0]
    assert top.id == "PB-03"
    assert {"episode:client", "episode:downtim", "episode:mail"} <= set(top.contributions)
    assert not top.matched_terms  # none of the rule's own words
    assert "word client via ep-pb03aaaaa task" in top.why()
    # the output shows the task's own words; stems stay in --explain's arithmetic
    said = top.why(res.stats.words)
    assert "word clients via ep-pb03aaaaa task" in said and "word downtime via" in said
    assert "downtim " not in said
    assert "episode:client" in lines and "term client via ep-pb03aaaaa task (tf 1)" in lines
    rule = data["rules"][0]
    assert rule["through_episodes"] == ["client", "downtim", "mail"]
    assert {"episode": "ep-pb03aaaaa", "field": "task", "tf": 1} in rule["episodes"][0]["via"]
    js = res.to_json()["rules"][0]
    assert js["matched_via_episodes"][0]["via"][0]["episode"] == "ep-pb03aaaaa"
    # The contributions still add up to the score.
    assert abs(sum(top.contributions.values()) - top.score) < 1e-3
    # Below the rule's own words: the same stem scores more in the rule's text.
    own = recall_task(memory_repo, "Email the customers about the outage", log=False).rules[0]
    assert own.id == "PB-03" and own.score > top.score


def test_episode_words_follow_the_ledger_and_the_playbook(memory_repo: MemoryRepo) -> None:
    eps = _eps(LINKEDIN, CANARY, OUTAGE)
    _memory(memory_repo, [LINKEDIN, CANARY, OUTAGE], eps)
    task = "Warn the clients about the downtime"
    assert not [r for r in recall_task(memory_repo, task, log=False).rules if r.id == "PB-03"]
    # A new episode cited by PB-03 teaches recall its words, incrementally.
    write_episode(memory_repo, "ep-pb03bbbbbb", task="Clients want a mail about downtime", correction="Yes")
    book = pb.parse(memory_repo.playbook_path.read_text())
    rule = book.get("PB-03")
    assert rule is not None
    from dataclasses import replace

    book = pb.Playbook(
        rules=tuple(
            r if r.id != "PB-03" else replace(r, episode_ids=(*r.episode_ids, "ep-pb03bbbbbb"))
            for r in book.rules
        )
    )
    memory_repo.playbook_path.write_text(pb.render(book))
    git(memory_repo.root, "add", "-A")
    git(memory_repo.root, "commit", "-q", "--no-verify", "-m", "cite")
    before = recall_task(memory_repo, task, log=False)
    assert before.rules and before.rules[0].id == "PB-03"
    # Same answer after a rebuild (byte-identical JSON).
    with open_index(memory_repo) as index:
        a = recall(index, task).dumps()
    with open_index(memory_repo, rebuild_now=True) as index:
        b = recall(index, task).dumps()
    assert a == b
    # Retiring nothing but un-citing the episode forgets its words.
    memory_repo.playbook_path.write_text(
        pb.render(pb.Playbook(rules=tuple(replace(r, episode_ids=r.episode_ids[:1]) for r in book.rules)))
    )
    assert not [r for r in recall_task(memory_repo, task, log=False).rules if r.id == "PB-03"]


def test_words_every_task_says_count_less(memory_repo: MemoryRepo) -> None:
    rules = [LINKEDIN, CANARY, OUTAGE]
    eps = _eps(*rules)
    for i in range(12):
        eps[f"ep-boiler{i:05d}"] = {"task": f"You are a customer; ask the agent about item {i}"}
    _memory(memory_repo, rules, eps)
    with open_index(memory_repo) as index:
        res = recall(index, "The customer asks the agent about an outage email")
        data = explain_data(res)
        lines = "\n".join(explain_lines(res))
    assert data["task_count"] == 15
    assert data["ledger_df"]["custom"] == 13 and data["ledger"]["custom"] == round(1 - 12 / 25, 4)
    assert data["ledger"]["agent"] == 0.56 and data["ledger"].get("outag", 1.0) == 1.0
    assert "ledger weights: " in lines and "custom 0.52 (13 of 15)" in lines
    top = res.rules[0]
    assert top.id == "PB-03"
    assert "x ledger 0.5200" in lines


def test_json_is_the_same_on_every_clone(memory_repo: MemoryRepo, tmp_path) -> None:
    _memory(
        memory_repo,
        [LINKEDIN, CANARY, OUTAGE],
        _eps(LINKEDIN, CANARY, OUTAGE, tasks={"PB-03": "Mail clients on downtime"}),
    )
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(memory_repo.root), str(clone))
    from scarwarden.repo import open_repo

    task = "Mail the clients: downtime tonight"
    ours = recall_task(memory_repo, task, log=False)
    theirs = recall_task(open_repo(clone), task, log=False)
    assert ours.verdict == theirs.verdict
    assert json.dumps(ours.to_json()["rules"]) == json.dumps(theirs.to_json()["rules"])
