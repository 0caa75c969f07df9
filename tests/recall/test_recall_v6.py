"""Recall version 6 (issue 26): the same-case term (a rule whose closest cited episode's
task says much of this task outranks a rule of the same user from another task), and
every one of the first pass's candidates scored exactly. Each scenario is checked
against version 5's arithmetic too (the gate's re-derivation at algorithm 5), so the
test shows what version 6 changes."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from conftest import git
from helpers import write_episode
from test_recall_v4 import _book

from scarwarden.config import RecallSettings
from scarwarden.files import playbook as pb
from scarwarden.files.receipt import Receipt
from scarwarden.gate.proofs_ledger import LedgerProofs
from scarwarden.index import open_index
from scarwarden.recall.engine import recall, recall_task
from scarwarden.recall.formulas import CASE_POWER, CASE_WEIGHT, idf, same_case
from scarwarden.recall.pure import postings
from scarwarden.recall.score import TaskTerms
from scarwarden.recall.score_parts import case_match
from scarwarden.repo import MemoryRepo

TASK = "Cancel reservation K1NW8N for user mia_li_3668 because her flight was delayed"
#: Another task of the same user: its rule shares the user's name with TASK.
OTHER = "Change the flight of reservation QX72P for user mia_li_3668 to the morning"
OWN = pb.make_rule(
    "PB-01",
    "Check insurance before cancelling K1NW8N",
    "Cancel reservation K1NW8N only after checking its travel insurance.",
    [],
    ["ep-case0000001"],
)
SAME_USER = pb.make_rule(
    "PB-02",
    "Verify mia_li_3668 first",
    "Before changing anything for user mia_li_3668, verify her identity.",
    [],
    ["ep-case0000002"],
)


def _memory(repo: MemoryRepo) -> None:
    write_episode(repo, "ep-case0000001", task=TASK, correction="Check the travel insurance of K1NW8N first.")
    write_episode(repo, "ep-case0000002", task=OTHER, correction="Verify the identity of mia_li_3668 first.")
    _book(repo, [OWN, SAME_USER])


def _ranked_by(repo: MemoryRepo, algorithm: int) -> list[str]:
    """The rules version ``algorithm`` returns for TASK (the gate's re-derivation from
    the committed playbook and ledger, no index), floor 0."""
    settings = RecallSettings(floor=0.0)
    made = recall_task(repo, TASK, log=False)
    assert made.receipt is not None
    fields = {k: v for k, v in made.receipt.to_json().items() if k != "receipt"}
    receipt = Receipt.make(
        **{**fields, "algorithm": algorithm, "settings": {**settings.__dict__, "limit": 3}}
    )
    blob = receipt.playbook
    book = postings(pb.parse(git(repo.root, "cat-file", "blob", blob).stdout))
    proofs = LedgerProofs(repo.root, repo.playbook_rel, repo.episodes_rel, revs=["HEAD"])
    derived = proofs.recall(book, receipt, settings)
    assert not isinstance(derived, str), derived
    return [r.id for r in derived.rules]


def _probe(repo: MemoryRepo, limit: int = 3) -> list[Any]:
    with open_index(repo) as index:
        return recall(index, TASK, limit=limit, settings=RecallSettings(floor=0.0), share=0.0).rules


def test_the_same_case_outranks_a_same_user_rule_from_another_task(memory_repo: MemoryRepo, make_cli) -> None:  # type: ignore[no-untyped-def]
    _memory(memory_repo)
    out = make_cli(memory_repo.root)("recall", "--no-log", "--json", TASK)
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    first = data["rules"][0]
    assert first["id"] == "PB-01"
    assert first["contributions"]["case:ep-case0000001"] > 0.0
    # the score is still the sum of the named contributions
    assert abs(sum(first["contributions"].values()) - first["score"]) < 1e-3
    scores = {r.id: r for r in _probe(memory_repo)}
    own, user = scores["PB-01"], scores["PB-02"]
    assert own.score > user.score
    # without the case terms (version 5's sum), the same-user rule ranked first
    assert own.score - own.case.contribution < user.score - user.case.contribution


def test_version_5_ranks_the_same_user_rule_first_and_6_the_own_case(memory_repo: MemoryRepo) -> None:
    _memory(memory_repo)
    assert _ranked_by(memory_repo, 5)[0] == "PB-02"
    assert _ranked_by(memory_repo, 6)[0] == "PB-01"


def test_every_first_pass_candidate_is_scored_exactly(memory_repo: MemoryRepo, make_cli) -> None:  # type: ignore[no-untyped-def]
    """With ``--limit 1`` version 5 scored only the first pass's best (the same-user
    rule); version 6 scores all its candidates, so the own case's rule comes first."""
    _memory(memory_repo)
    [rule] = _probe(memory_repo, limit=1)
    assert rule.id == "PB-01"
    out = make_cli(memory_repo.root)("recall", "--no-log", "--limit", "1", "--explain", TASK)
    assert out.exit_code == 0, out.output
    assert "PB-01" in out.stdout and "PB-02:" not in out.stdout
    [line] = [x for x in out.stdout.splitlines() if x.strip().startswith("case:ep-case0000001")]
    assert f"= {CASE_WEIGHT:g} x share 1.0000^{CASE_POWER}" in line and "k1nw8n" in line


def test_explain_json_names_the_case_term_and_its_arithmetic(memory_repo: MemoryRepo, make_cli) -> None:  # type: ignore[no-untyped-def]
    _memory(memory_repo)
    out = make_cli(memory_repo.root)("recall", "--no-log", "--json", "--explain", TASK)
    data = json.loads(out.stdout)
    explain = data["explain"]
    assert explain["formula"]["case_weight"] == CASE_WEIGHT
    rules = {r["id"]: r for r in explain["rules"]}
    own = rules["PB-01"]["case"]
    assert own["episode"] == "ep-case0000001" and own["share"] == 1.0
    assert data["rules"][0]["contributions"]["case:ep-case0000001"] == own["contribution"]
    other = rules["PB-02"]["case"]
    # ep-case0000002's task says only some of TASK's words: a share under 1
    assert other["episode"] == "ep-case0000002" and 0.0 < other["share"] < 1.0
    expected = same_case(other["share"], explain["task_mass"])
    assert abs(other["contribution"] - expected) < 1e-3
    assert "mia" in other["stems"] and "k1nw8n" not in other["stems"]


def test_no_task_word_in_the_closest_episode_s_task_adds_nothing() -> None:
    task = TaskTerms(Counter({"refund": 1, "card": 1}), {"refund": 1, "card": 1}, 4, 10.0, 2 * idf(1, 4))
    only_correction = {"refund": [("ep-1", "correction", 1)]}
    assert case_match(task, only_correction, "ep-1", 5.0) == (5.0, None)
    said = {"refund": [("ep-1", "task", 1)]}
    total, match = case_match(task, said, "ep-1", 5.0)
    assert match is not None and match.share == 0.5 and match.stems == ["refund"]
    assert abs(total - 5.0 - CASE_WEIGHT * 0.25 * task.task_mass) < 1e-9
    old = TaskTerms(task.qtf, task.df, 4, 10.0, task.task_mass, version=5)
    assert case_match(old, said, "ep-1", 5.0) == (5.0, None)
