"""``distill`` writes the rules it adds, updates and retires and changes no other byte of
the playbook: a CRLF file stays CRLF, hand spacing stays, and the diff a reviewer reads
holds the distiller's changes only. A canonical file gets exactly the canonical text."""

from __future__ import annotations

from conftest import git
from fakellm import FakeLLM, reply_json
from helpers import commit_playbook_bytes, numstat
from test_distill_model import client_for

from scarwarden.distill import distill
from scarwarden.files import playbook as pb
from scarwarden.gate import check
from scarwarden.repo import MemoryRepo

WEBINAR = ["ep-9ak5fm33w3", "ep-b9jr19c6sp"]
#: An update (PB-07), a retirement (PB-14, in the middle of the file) and an addition.
CHANGES = {
    "operations": [
        {
            "op": "update",
            "rule_id": "PB-07",
            "text": "Keep newsletter subject lines under 45 characters.",
            "episode_ids": ["ep-9ak5fm33w3"],
        },
        {"op": "retire", "rule_id": "PB-14", "reason": "Superseded", "episode_ids": ["ep-b9jr19c6sp"]},
        {
            "op": "add",
            "title": "State the timezone in webinar times",
            "text": "Give every webinar time in UTC first.",
            "tags": ["webinar"],
            "episode_ids": WEBINAR,
        },
    ]
}


def _lf(data: bytes) -> str:
    return data.decode().replace("\r\n", "\n")


def test_a_crlf_playbook_stays_crlf_and_passes_the_gate(demo_repo: MemoryRepo) -> None:
    before = demo_repo.playbook_path.read_bytes().replace(b"\n", b"\r\n")
    commit_playbook_bytes(demo_repo, before)
    result = distill(demo_repo, offline=True)
    assert [c.kind for c in result.changes] == ["add", "add"]
    after = demo_repo.playbook_path.read_bytes()
    assert after.startswith(before)  # every old byte kept, the rules appended
    added = after[len(before) :]
    assert b"\n" not in added.replace(b"\r\n", b"") and added.startswith(b"\r\n## PB-")
    assert numstat(demo_repo) == (added.count(b"\r\n"), 0)
    assert [r.id for r in pb.parse(_lf(after)).rules][-2:] == [c.rule_id for c in result.changes]
    report = check.check_range(demo_repo.root, "HEAD~1", "HEAD")
    assert report.ok, [str(p) for p in report.problems]


def test_updates_and_retirements_change_their_rules_only(demo_repo: MemoryRepo, llm: FakeLLM) -> None:
    canonical = demo_repo.playbook_path.read_bytes()
    spaced = canonical.replace(b"\n\n## PB-02", b"\n\n\n\n## PB-02")
    spaced = spaced.replace(b"- Tags: linkedin", b"- Tags:  linkedin")
    before = spaced.replace(b"\n", b"\r\n")
    commit_playbook_bytes(demo_repo, before)
    llm.script(reply_json(CHANGES))
    result = distill(demo_repo, client=client_for(llm))
    assert sorted(c.kind for c in result.changes) == ["add", "retire", "update"]
    after = demo_repo.playbook_path.read_bytes()
    assert b"\n" not in after.replace(b"\r\n", b"")  # CRLF throughout
    assert after.startswith(before[: before.index(b"## PB-07")])  # the hand spacing before PB-07 kept
    book = pb.parse(_lf(after))
    assert book.get("PB-07").text == "Keep newsletter subject lines under 45 characters."
    assert book.get("PB-14").retired and book.retired[-1].id == "PB-14"
    diff = git(demo_repo.root, "diff", "HEAD~1", "HEAD").stdout
    removed = [line for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    old = pb.parse(_lf(before))
    rules = (old.get("PB-07"), old.get("PB-14"))
    allowed = {line for rule in rules for line in pb.render(pb.Playbook(rules=(rule,))).splitlines()}
    assert removed and all(line[1:].rstrip("\r") in allowed for line in removed), removed
    report = check.check_range(demo_repo.root, "HEAD~1", "HEAD")
    assert report.ok, [str(p) for p in report.problems]


def test_a_canonical_playbook_gets_the_canonical_text(demo_repo: MemoryRepo, llm: FakeLLM) -> None:
    llm.script(reply_json(CHANGES))
    distill(demo_repo, client=client_for(llm))
    text = demo_repo.playbook_path.read_text()
    assert pb.render(pb.parse(text)) == text


def test_migrate_keeps_a_crlf_playbook_crlf(cli, demo_repo: MemoryRepo) -> None:
    text = demo_repo.playbook_path.read_bytes().replace(b"\n\n## PB-02", b"\n\n\n## PB-02")
    before = text.replace(b"\n", b"\r\n")
    commit_playbook_bytes(demo_repo, before)
    out = cli("distill", "--migrate")
    assert out.exit_code == 0, out.output
    after = demo_repo.playbook_path.read_bytes()
    assert b"\n" not in after.replace(b"\r\n", b"") and b"\r\n\r\n\r\n## PB-02" in after
    assert numstat(demo_repo) == (after.count(b"- Sentences from:"), 0)  # one line per rule mapped
    assert all(rule.sources for rule in pb.parse(_lf(after)).rules)
    assert check.check_range(demo_repo.root, "HEAD~1", "HEAD").ok
