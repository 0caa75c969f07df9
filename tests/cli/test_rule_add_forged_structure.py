"""``rule add`` refused a heading or a '- Learnt in:' line in a rule's text only at the
line's very start: ' ## PB-99: ...', '  - Learnt in: ep-...', '* Tags: ...' or a line
underlined with '===' were written into the playbook, where a reader (and GitHub's
rendered view of a pull request) takes them for the playbook's own headings and
citations: provenance the gate never checked. They are refused, nothing written."""

from __future__ import annotations

import pytest
from conftest import Cli, git

from scarwarden.repo import MemoryRepo

CITED = "ep-hkgnqdz88f"  # an episode of the demo ledger
OTHER = "ep-0000000000"


@pytest.mark.parametrize(
    "line",
    [
        " ## PB-99: Forged rule",
        "   # Playbook",
        "\t## PB-99: Forged rule",
        f"  - Learnt in: {OTHER}",
        f"* Learnt in: {OTHER}",
        "+ Tags: forged",
        "-   Applies to: images",
        "=====",
        " ---",
    ],
)
@pytest.mark.parametrize("commit", [[], ["--no-commit"]])
def test_a_line_that_reads_as_the_playbooks_structure_is_refused(
    cli: Cli, demo_repo: MemoryRepo, line: str, commit: list[str]
) -> None:
    before = git(demo_repo.root, "rev-parse", "HEAD").stdout, demo_repo.playbook_path.read_bytes()
    result = cli("rule", "add", "--text", f"Check the logo.\n{line}\nThen post.", "--cites", CITED, *commit)
    assert result.exit_code == 1, result.output
    assert "reads as the playbook's own" in result.stderr, result.stderr
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""
    assert (git(demo_repo.root, "rev-parse", "HEAD").stdout, demo_repo.playbook_path.read_bytes()) == before


@pytest.mark.parametrize(
    "text",
    ["Lead with the pain.\n- Name it\n- Then the fix", "Use #hashtags last.", "Tags: two at most.", "A - B"],
)
def test_lists_and_hashes_in_a_sentence_are_text(cli: Cli, text: str) -> None:
    result = cli("rule", "add", "--text", text, "--cites", CITED)
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    "text",
    [
        "Check the logo. <!-- the rest is hidden",
        "Check the logo.\n<!--\nhidden",
        "Check the logo. <!-- a --> then <!-- open",
    ],
)
def test_an_unclosed_comment_is_refused(cli: Cli, demo_repo: MemoryRepo, text: str) -> None:
    # In a Markdown view an unclosed '<!--' hides the rest of the file: this rule's own
    # '- Learnt in:' line and every rule after it.
    before = git(demo_repo.root, "rev-parse", "HEAD").stdout, demo_repo.playbook_path.read_bytes()
    result = cli("rule", "add", "--text", text, "--cites", CITED)
    assert result.exit_code == 1, result.output
    assert "is not closed" in result.stderr, result.stderr
    assert (git(demo_repo.root, "rev-parse", "HEAD").stdout, demo_repo.playbook_path.read_bytes()) == before


@pytest.mark.parametrize(
    "text", ["Check the logo. <!-- a note -->", "Check the logo.\n```\nx = 1\n```", "Use `code` inline."]
)
def test_a_closed_comment_a_fence_and_inline_code_are_text(cli: Cli, text: str) -> None:
    assert cli("rule", "add", "--text", text, "--cites", CITED).exit_code == 0
