"""Issue 26 on the web task page: each rule's evidence, ASK_HUMAN's candidates with
theirs, and a candidate confirmed there recorded as ``ask --confirm`` records it (the
rule's words as the correction, its episodes as refs); a bad rule ID writes nothing."""

from __future__ import annotations

import pytest
from conftest import git, head
from test_workpages import ORIGIN, TOKEN, _client

from scarwarden.files import playbook as pb
from scarwarden.files.episodes import parse_episode_bytes
from scarwarden.repo import MemoryRepo

pytest.importorskip("flask")

DISCOUNT = "Post our discount code on Twitter"
KAFKA = "Rename the production Kafka topic"


def test_the_task_page_shows_each_rules_evidence(demo_repo: MemoryRepo) -> None:
    page = _client(demo_repo).get(f"/task?task={DISCOUNT}").get_data(as_text=True)
    assert 'Evidence (<a href="/episodes/ep-wmjgdnc59j">ep-wmjgdnc59j</a>): Discount codes go only' in page


def test_the_task_page_shows_the_candidates_with_their_evidence(demo_repo: MemoryRepo) -> None:
    page = _client(demo_repo).get(f"/task?task={KAFKA}").get_data(as_text=True)
    section = page.split('id="candidates"')[1].split("</section>")[0]
    assert "Nearest, unconfirmed: ask before using" in section
    assert section.index("PB-01") < section.index("PB-04")
    assert section.count("Evidence (") == 2 and section.count("Confirm PB-0") == 2
    none = _client(demo_repo).get("/task?task=Xylophone zebra quux").get_data(as_text=True)
    assert "None: no rule and no failed episode shares a word with this task." in none


def test_a_candidate_confirmed_on_the_page_is_recorded_as_ask_confirm_does(demo_repo: MemoryRepo) -> None:
    client = _client(demo_repo)
    before = head(demo_repo)
    bad = client.post(
        "/confirm",
        data={"csrf_token": TOKEN, "task": KAFKA, "rule_id": "PB-99", "candidate": "1"},
        headers=ORIGIN,
    )
    assert bad.status_code == 400 and "no rule PB-99" in bad.get_data(as_text=True)
    assert head(demo_repo) == before and git(demo_repo.root, "status", "--porcelain").stdout == ""
    done = client.post(
        "/confirm",
        data={"csrf_token": TOKEN, "task": KAFKA, "rule_id": "pb-1", "candidate": "1"},
        headers=ORIGIN,
    )
    assert done.status_code == 303, done.get_data(as_text=True)
    ep_id = done.headers["Location"].split("/episodes/")[1].split("?")[0]
    rel = git(demo_repo.root, "show", "--name-only", "--format=", "HEAD").stdout.split()
    path = next(p for p in rel if p.endswith(f"{ep_id}.yaml"))
    ep = parse_episode_bytes((demo_repo.root / path).read_bytes(), path, episodes_dir=demo_repo.episodes_rel)
    rule = pb.parse(demo_repo.playbook_path.read_text()).get("PB-01")
    assert rule is not None
    assert ep.task == KAFKA and "PB-01" in str(ep.get("action"))
    assert ep.get("correction") == rule.text and ep.get("refs") == list(dict.fromkeys(rule.episode_ids))
