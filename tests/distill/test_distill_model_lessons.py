"""The model path: citations limited to what the model was shown, supersede, reports."""

from __future__ import annotations

from conftest import git
from fakellm import FakeLLM, reply_json
from test_distill_model import GERMAN, NEW, WEBINAR, client_for, last_message, trailer, user_prompt

from scarwarden.distill import distill
from scarwarden.files import playbook as pb
from scarwarden.repo import MemoryRepo

OLD = "ep-hkgnqdz88f"  # in the ledger, cited by PB-01, never sent in these runs


def test_citations_outside_the_batch_are_dropped_and_the_episode_retried(
    demo_repo: MemoryRepo, llm: FakeLLM
) -> None:
    llm.script(
        reply_json(
            {
                "operations": [
                    {
                        "op": "add",
                        "title": "Webinar times",
                        "text": "State the timezone.",
                        "tags": ["webinar"],
                        "episode_ids": WEBINAR,
                    },
                    # Only an existing episode it was never shown: dropped as a whole.
                    {
                        "op": "add",
                        "title": "Use the glossary",
                        "text": "Translate with the glossary.",
                        "episode_ids": [OLD],
                    },
                    # PB-01 already cites OLD: allowed.
                    {"op": "update", "rule_id": "PB-01", "episode_ids": [OLD, WEBINAR[0]]},
                    # PB-07 does not: that citation is removed, the update stands.
                    {"op": "update", "rule_id": "PB-07", "episode_ids": [WEBINAR[1], OLD]},
                ]
            }
        )
    )
    result = distill(demo_repo, client=client_for(llm))
    reasons = [d.describe() for d in result.drops]
    assert reasons == [
        'dropped add "Use the glossary": its only citations are not sent to the model in this batch '
        "(it may cite only what it was shown, or what the rule cites)",
        f"removed citation {OLD} from update PB-07: not sent to the model in this batch "
        "(it may cite only what it was shown, or what the rule cites)",
    ]
    book = pb.parse(demo_repo.playbook_path.read_text())
    assert OLD not in book.get("PB-07").episode_ids
    assert WEBINAR[0] in book.get("PB-01").episode_ids
    assert all("glossary" not in rule.text.lower() for rule in book.rules)
    # The episode the dropped operation was about stays undistilled, with the reason.
    assert sorted(result.distilled) == sorted(WEBINAR)
    assert [ep for ep, _ in result.left] == [GERMAN]
    assert "retried next run" in dict(result.left)[GERMAN]
    assert sorted(trailer(demo_repo, "Scarwarden-Distilled-Episode")) == sorted(WEBINAR)
    assert f"- {GERMAN}: an operation about it was dropped" in last_message(demo_repo)
    # The next run sends it again, and only it.
    llm.script(reply_json({"operations": []}))
    again = distill(demo_repo, client=client_for(llm))
    assert again.new == [GERMAN]
    assert (
        f'"id": "{GERMAN}"' in user_prompt(llm, 1)
        and WEBINAR[0] not in user_prompt(llm, 1).split("BEGIN EPISODES")[1]
    )


def test_a_model_supersede_retires_the_contradicted_rule(demo_repo: MemoryRepo, llm: FakeLLM) -> None:
    llm.script(
        reply_json(
            {
                "operations": [
                    {
                        "op": "supersede",
                        "rule_id": "PB-07",
                        "title": "Keep newsletter subject lines very short",
                        "text": "Keep newsletter subject lines under 35 characters, one concrete benefit.",
                        "reason": "contradicted by ep-9ak5fm33w3: a different limit (50 against 35)",
                        "episode_ids": ["ep-04yqq457qh", WEBINAR[0]],
                    },
                    {
                        "op": "supersede",
                        "rule_id": "PB-05",
                        "text": "Something else.",
                        "reason": "no evidence",
                    },
                ]
            }
        )
    )
    result = distill(demo_repo, client=client_for(llm))
    (change,) = result.changes
    assert change.kind == "supersede" and change.rule_id == "PB-07" and change.replaced_by
    book = pb.parse(demo_repo.playbook_path.read_text())
    old, new = book.get("PB-07"), book.get(change.replaced_by)
    assert old.retired and old.replaced_by == new.id
    assert old.reason == "contradicted by ep-9ak5fm33w3: a different limit (50 against 35)"
    assert new.episode_ids == ("ep-04yqq457qh", WEBINAR[0])
    assert new.text.startswith("Keep newsletter subject lines under 35")
    assert not book.get("PB-05").retired
    assert [d.describe() for d in result.drops] == [
        "dropped supersede PB-05: it cites no episode (no provenance, no rule); "
        "a supersede must cite the contradicting episode"
    ]
    message = last_message(demo_repo)
    assert message.startswith("distill: +0 rules, ~0 updated, -0 retired, 1 superseded")
    assert f"Superseded PB-07: Keep newsletter subject lines short and concrete by {new.id}" in message
    assert "  before: Keep newsletter subject lines under 50 characters" in message
    assert f"Scarwarden-Rule: {new.id}" in message


def test_an_identical_update_is_reported_and_changes_nothing(demo_repo: MemoryRepo, llm: FakeLLM) -> None:
    pb07 = pb.parse(demo_repo.playbook_path.read_text()).get("PB-07")
    before = demo_repo.playbook_path.read_bytes()
    llm.script(
        reply_json(
            {
                "operations": [
                    {"op": "update", "rule_id": "PB-07", "text": pb07.text, "episode_ids": ["ep-04yqq457qh"]}
                ]
            }
        )
    )
    result = distill(demo_repo, client=client_for(llm))
    assert result.changes == []
    assert [d.describe() for d in result.drops] == [
        "dropped update PB-07: nothing to change: the rule already says this and cites these episodes"
    ]
    assert demo_repo.playbook_path.read_bytes() == before
    # Nothing is retried for it: the model's decision about the batch stands.
    assert sorted(result.distilled) == NEW and result.left == []
    files = git(demo_repo.root, "show", "--name-only", "--format=", "HEAD").stdout.split()
    assert files == []  # the commit records the episodes only; no playbook change
    assert last_message(demo_repo).startswith("distill: +0 rules, ~0 updated, -0 retired\n")


def test_the_prompt_asks_for_contradictions_and_supersede(demo_repo: MemoryRepo, llm: FakeLLM) -> None:
    llm.script(reply_json({"operations": []}))
    distill(demo_repo, client=client_for(llm))
    system = llm.requests[0]["body"]["messages"][0]["content"]
    assert "Look for contradictions explicitly" in system and "Newer evidence wins" in system
    assert '"op": "supersede"' in user_prompt(llm)


CODES = "Discount codes go only to the private email list. Announce a sale publicly without the code."
TAUGHT = ["ep-wmjgdnc59j", "ep-56m702j8dv"]


def _mapped_rule(cli) -> str:
    import json

    added = cli(
        "rule", "add", "--title", "Codes private", "--text", CODES, "--cites", ",".join(TAUGHT),
        "--sentences-from", f"1: {TAUGHT[0]}; 2: {TAUGHT[1]}", "--json",
    )  # fmt: skip
    assert added.exit_code == 0, added.output
    return str(json.loads(added.stdout)["id"])


def _said(repo: MemoryRepo, rule_id: str) -> list[tuple[tuple[str, ...], str]]:
    rule = pb.parse(repo.playbook_path.read_text()).get(rule_id)
    return [(said.episode_ids, said.kind) for said in rule.said()]


def test_an_update_keeps_the_map_of_the_sentences_it_keeps(cli, demo_repo: MemoryRepo, fake_llm) -> None:
    """The model's map spoke for sentence 2 only, yet sentence 1's entry (the episode that
    taught it, checked strictly) was erased: it became 'from the rule's citations', the
    new episode among them. An entry the map leaves out now stays, for a kept sentence."""
    rule_id = _mapped_rule(cli)
    update = {"op": "update", "rule_id": rule_id, "episode_ids": [GERMAN], "sentences_from": {"2": [GERMAN]}}
    fake_llm.script(reply_json({"operations": [update]}))
    assert cli("distill").exit_code == 0
    assert _said(demo_repo, rule_id) == [((TAUGHT[0],), "stated"), ((GERMAN,), "model")]


def test_a_new_text_without_a_map_keeps_the_map_of_the_sentences_it_keeps(
    cli, demo_repo: MemoryRepo, fake_llm
) -> None:
    rule_id = _mapped_rule(cli)
    text = f"{CODES} Webinar invitations state the timezone."
    update = {"op": "update", "rule_id": rule_id, "text": text, "episode_ids": WEBINAR}
    fake_llm.script(reply_json({"operations": [update]}))
    assert cli("distill").exit_code == 0
    everyone = (*TAUGHT, *WEBINAR)
    kept = [((TAUGHT[0],), "stated"), ((TAUGHT[1],), "stated")]
    assert _said(demo_repo, rule_id) == [*kept, (everyone, "rule")]


def test_a_map_restating_a_sentence_s_episodes_changes_nothing(cli, demo_repo: MemoryRepo, fake_llm) -> None:
    """The model names for each sentence the very episodes the map names already: its
    mark became '(model)' (a warning where the support check refused), recorded as an
    update ('sentence map changed') that changed nothing else."""
    rule_id = _mapped_rule(cli)
    head = git(demo_repo.root, "rev-parse", "HEAD").stdout
    same = {"1": TAUGHT[:1], "2": TAUGHT[1:]}
    update = {"op": "update", "rule_id": rule_id, "episode_ids": TAUGHT, "sentences_from": same}
    fake_llm.script(reply_json({"operations": [update]}))
    done = cli("distill", "--json")
    assert done.exit_code == 0, done.output
    assert _said(demo_repo, rule_id) == [((TAUGHT[0],), "stated"), ((TAUGHT[1],), "stated")]
    assert git(demo_repo.root, "diff", head.strip(), "HEAD", "--", "memory/playbook.md").stdout == ""
