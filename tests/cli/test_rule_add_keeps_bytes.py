"""``rule add`` adds its rule's lines and changes no other byte of the playbook: a CRLF
file stays CRLF, hand spacing stays, the new rule goes before '## Retired'."""

from __future__ import annotations

import pytest
from conftest import Cli
from helpers import commit_playbook_bytes, numstat

from scarwarden.files import playbook as pb
from scarwarden.repo import MemoryRepo

CITED = "ep-hkgnqdz88f"  # an episode of the demo ledger


def test_a_crlf_playbook_stays_crlf(cli: Cli, demo_repo: MemoryRepo) -> None:
    before = demo_repo.playbook_path.read_bytes().replace(b"\n", b"\r\n")
    commit_playbook_bytes(demo_repo, before)
    result = cli("rule", "add", "--text", "Test twice. Then ship.", "--cites", CITED, "--tag", "qa")
    assert result.exit_code == 0, result.output
    after = demo_repo.playbook_path.read_bytes()
    assert after.startswith(before)  # every old byte kept, the rule appended
    added = after[len(before) :]
    assert b"\n" not in added.replace(b"\r\n", b"")  # the new lines end as the file's do
    assert added.startswith(b"\r\n## PB-") and added.endswith(b"- Learnt in: " + CITED.encode() + b"\r\n")
    assert numstat(demo_repo) == (added.count(b"\r\n"), 0)  # the diff a reviewer reads
    assert pb.parse(after.decode().replace("\r\n", "\n")).rules[-1].text == "Test twice. Then ship."


def test_hand_spacing_and_the_retired_section_are_kept(cli: Cli, demo_repo: MemoryRepo) -> None:
    text = demo_repo.playbook_path.read_text()
    text = text.replace("\n\n## PB-02", "\n\n\n\n## PB-02").replace("- Tags: linkedin", "- Tags:  linkedin")
    retired = f"## Retired\n\n### PB-99: Old\n\nOld text.\n\n- Tags: old\n- Learnt in: {CITED}\n"
    retired += "- Retired: gone\n"
    before = (text + "\n" + retired).encode()
    commit_playbook_bytes(demo_repo, before)
    result = cli("rule", "add", "--text", "Test twice.", "--cites", CITED)
    assert result.exit_code == 0, result.output
    after = demo_repo.playbook_path.read_bytes()
    head, _, tail = before.partition(b"## Retired\n")
    assert after.startswith(head) and after.endswith(b"## Retired\n" + tail)
    assert after[len(head) :].startswith(b"## PB-")
    assert numstat(demo_repo)[1] == 0
    book = pb.parse(after.decode())
    assert book.rules[-1].text == "Test twice." and [r.id for r in book.retired] == ["PB-99"]


def test_a_playbook_without_a_final_newline(cli: Cli, demo_repo: MemoryRepo) -> None:
    before = demo_repo.playbook_path.read_bytes().rstrip(b"\n")
    commit_playbook_bytes(demo_repo, before)
    result = cli("rule", "add", "--text", "Test twice.", "--cites", CITED)
    assert result.exit_code == 0, result.output
    after = demo_repo.playbook_path.read_bytes()
    assert after.startswith(before + b"\n\n## PB-")
    assert pb.parse(after.decode()).rules[-1].text == "Test twice."


def test_a_canonical_playbook_gets_the_canonical_text(demo_repo: MemoryRepo) -> None:
    demo = pb.parse(demo_repo.playbook_path.read_text())
    rule = pb.make_rule("PB-abcdefgh", "New", "Test twice.", ["qa"], [CITED])
    retired_only = pb.Playbook(retired=(demo.with_retired("PB-01", "gone", None).retired[0],))
    for book in (pb.empty(), demo, demo.with_retired("PB-02", "gone", "PB-03"), retired_only):
        assert pb.render_added(pb.render(book), rule) == pb.render(book.with_rule(rule))


RETIRED = f"## Retired\n\n### PB-99: Old\n\nOld.\n\n- Tags: old\n- Learnt in: {CITED}\n- Retired: gone\n"


@pytest.mark.parametrize(
    "text",
    [
        "# Playbook",  # the title alone, no line ending
        "\n\n# Playbook\n\nNotes.\n   \n",  # blank lines before the title, a blank line of spaces
        f"# Playbook\n\n## PB-01: A\n\nA.\n\n- Tags: a\n- Learnt in: {CITED}\n{RETIRED}",  # no blank line
        f"# Playbook\r\n\r\n{RETIRED}".replace("\n", "\r\n").replace("\r\r", "\r"),  # CRLF, retired only
    ],
)
def test_the_rule_is_added_to_any_valid_playbook(text: str) -> None:
    rule = pb.make_rule("PB-abcdefgh", "New", "Test twice.", ["qa"], [CITED])
    added = pb.render_added(text, rule)
    book, with_rule = pb.parse(text.replace("\r\n", "\n")), pb.parse(added.replace("\r\n", "\n"))
    assert [r.id for r in with_rule.rules] == [r.id for r in book.rules] + [rule.id]
    assert [r.id for r in with_rule.retired] == [r.id for r in book.retired]
    assert with_rule.rules[-1].text == "Test twice."
    at = added.index("## PB-abcdefgh")
    assert added[:at].rstrip("\r\n") == text[: len(added[:at].rstrip("\r\n"))]  # the start kept
    assert added.endswith(text[len(added[:at].rstrip("\r\n")) :].lstrip("\r\n"))  # the end kept
