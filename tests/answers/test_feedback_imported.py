"""`scarwarden feedback` on an episode imported from another memory, whose
rules_applied name that memory's rules."""

from __future__ import annotations

from conftest import Cli, head

from scarwarden.index import open_index
from scarwarden.repo import MemoryRepo


def test_feedback_on_an_imported_episode_keeps_its_foreign_rules(
    cli: Cli, demo_repo: MemoryRepo, tmp_path
) -> None:
    """The import was recorded with a warning (PB-99 is another memory's rule), but its
    feedback was refused ("feedback: rules_applied names a rule this memory never had",
    hint: leave it out), and feedback has no way to leave it out: no feedback could be
    given on the episode at all. The feedback keeps the rules, with the import's warning."""
    given = tmp_path / "imported.yaml"
    given.write_text("task: Cancel order 7\nsource: import\noutcome: cancelled\nrules_applied: [PB-99]\n")
    added = cli("episode", "add", "--file", str(given))
    assert added.exit_code == 0, added.output
    first = added.stdout.strip()
    before = head(demo_repo)
    result = cli("feedback", first, "--outcome", "The customer came back angry")
    assert result.exit_code == 0, result.output
    assert "PB-99 is not a rule in memory/playbook.md" in result.stderr
    assert head(demo_repo) != before
    with open_index(demo_repo) as index:
        episode = index.get_episode(result.stdout.strip())
    assert episode is not None
    assert episode.data["refs"] == [first] and episode.data["rules_applied"] == ["PB-99"]
    checked = cli("check", "--all")
    assert checked.exit_code == 0, checked.output


def test_feedback_finds_an_episode_as_episode_show_does(cli: Cli, demo_repo: MemoryRepo) -> None:
    """`episode show EP-HKGNQDZ88F` (or with a space pasted before it) shows the
    episode; `feedback` said "no episode EP-HKGNQDZ88F in the ledger" of it, and of an
    empty ID "no episode  in the ledger". It now finds the episode, and an empty ID is
    named as such; nothing is written for it."""
    for given in ("EP-HKGNQDZ88F", " ep-hkgnqdz88f "):
        result = cli("feedback", given, "--outcome", "Engagement doubled")
        assert result.exit_code == 0, (given, result.output)
        assert "(refs ep-hkgnqdz88f)" in result.stderr
        with open_index(demo_repo) as index:
            episode = index.get_episode(result.stdout.strip())
        assert episode is not None and episode.data["refs"] == ["ep-hkgnqdz88f"]
    before = head(demo_repo)
    empty = cli("feedback", " ", "--outcome", "Engagement doubled")
    assert empty.exit_code == 2, empty.output
    assert "the episode ID is empty" in empty.stderr
    assert head(demo_repo) == before


def test_a_blank_feedback_value_is_refused_not_dropped(cli: Cli, demo_repo: MemoryRepo) -> None:
    """`feedback ID --outcome ok --correction "   "` (an empty "$LESSON", say) recorded
    the outcome and dropped the correction without a word, exit 0; `episode add` refuses
    an empty correction. A value given blank is now refused (exit 2), nothing written."""
    before = head(demo_repo)
    for option in ("--correction", "--corrected-by", "--outcome"):
        result = cli("feedback", "ep-hkgnqdz88f", "--outcome", "Engagement doubled", option, "  ")
        assert result.exit_code == 2, (option, result.output)
        assert f"{option} is empty" in result.stderr, result.stderr
    assert head(demo_repo) == before
