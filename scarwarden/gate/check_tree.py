"""``check --all``: the committed-plus-staged tree as a whole, every episode parsed."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from scarwarden import git
from scarwarden.gate.report import CheckReport
from scarwarden.gate.resolve import (
    check_citations,
    memory_mode_problem,
    note_playbook_folder,
    open_memory,
    unmerged_problem,
)
from scarwarden.repo import MemoryRepo

if TYPE_CHECKING:
    from scarwarden.files.episodes import Episode


def check_all(
    root: Path | str | MemoryRepo,
    env: Mapping[str, str] | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> CheckReport:
    """The committed-plus-staged tree (git's index) as a whole: every episode valid and
    where its ID and date say, IDs unique, every citation resolving. ``progress(done,
    total)`` follows the episodes parsed (a bar on a terminal, issue 18)."""
    repo = open_memory(root)
    report = CheckReport("all", base="index")
    entries = git.ls_files_stage(repo.root, repo.memory_rel, env=env)
    report.no_memory = None if entries else repo.memory_rel
    episodes, playbook_blob = _sort_entries(report, repo, entries)
    wanted = [e.blob for e in episodes] + ([playbook_blob] if playbook_blob else [])
    blobs = git.cat_file_batch(repo.root, wanted, env=env)
    ledger = _read_episodes(report, repo, episodes, blobs[: len(episodes)], progress)
    if playbook_blob and blobs[-1] is None:  # git's index names it, the store lacks it
        from scarwarden.gate.policy import unreadable_playbook_problem

        report.problems.append(unreadable_playbook_problem(repo.playbook_rel, playbook_blob))
    _check_playbook(report, repo, blobs[-1] if playbook_blob else None, ledger)
    from scarwarden.gate.support import check_tree_support  # issue 25: sentence support

    check_tree_support(report, repo, None, env)
    _check_all_media(report, repo, entries, ledger.attached, env)
    _prove_all_receipts(report, repo, ledger.with_receipts, playbook_blob, env)
    if progress is not None:
        progress(len(episodes), len(episodes))
    return report


@dataclass
class _Ledger:
    """What the episodes of the tree told: each ID's path, and the ones to look at again."""

    by_id: dict[str, str] = field(default_factory=dict)
    redacted: dict[str, str] = field(default_factory=dict)
    attached: list[tuple[str, Episode]] = field(default_factory=list)
    with_receipts: list[tuple[str, Episode]] = field(default_factory=list)


def _sort_entries(
    report: CheckReport, repo: MemoryRepo, entries: list[git.StagedEntry]
) -> tuple[list[git.StagedEntry], str | None]:
    """The episode files to parse and the playbook's blob; a misplaced or irregular
    file under the ledger is reported now."""
    from scarwarden.gate import policy as rules

    ep_rel = repo.episodes_rel
    episodes: list[git.StagedEntry] = []
    playbook_blob = None
    unmerged: set[str] = set()
    for entry in entries:
        if entry.stage:  # one entry per side of a conflict: none of them is the tree
            if entry.path not in unmerged:
                unmerged.add(entry.path)
                report.problems.append(unmerged_problem(entry.path))
        elif entry.path == repo.playbook_rel:
            bad = rules.playbook_mode_problem(entry.path, entry.mode)
            if bad is None:
                playbook_blob = entry.blob
            else:
                report.problems.append(bad)
        elif rules.is_under(entry.path, repo.playbook_rel):
            note_playbook_folder(report, repo.playbook_rel, entry.path)
        elif bad := memory_mode_problem(repo.playbook_rel, ep_rel, entry.path, entry.mode):
            report.problems.append(bad)  # the episodes folder (or memory) as a link: nothing of it is read
        elif rules.is_under(entry.path, ep_rel):
            bad = rules.added_path_problem(entry.path, entry.mode, ep_rel)
            if bad is not None:
                report.problems.append(bad)
            elif entry.path.endswith(".yaml"):
                episodes.append(entry)
    return episodes, playbook_blob


def _read_episodes(
    report: CheckReport,
    repo: MemoryRepo,
    episodes: list[git.StagedEntry],
    blobs: list[bytes | None],
    progress: Callable[[int, int], None] | None,
) -> _Ledger:
    """Validate every episode; report a duplicate ID at its second path."""
    from scarwarden.gate import policy as rules
    from scarwarden.gate import screen

    ledger = _Ledger()
    for entry, raw in zip(episodes, blobs, strict=True):
        episode, found = rules.validate_episode(raw, entry.path, repo.episodes_rel)
        report.problems.extend(found)
        if episode is not None:  # the screen every door runs (docs/gate.md)
            problems, warnings = screen.episode_problems(episode, entry.path, raw, repo.config)
            report.problems.extend(problems)
            report.warnings.extend(warnings)
        report.count("episodes_checked")
        if progress is not None and report.stats["episodes_checked"] % 500 == 0:
            progress(report.stats["episodes_checked"], len(episodes))
        if episode is not None and episode.get("attachments"):
            ledger.attached.append((entry.path, episode))
        if episode is not None and episode.get("recalled") is not None:
            ledger.with_receipts.append((entry.path, episode))
        if episode is not None and episode.get("redacted") is not None:
            ledger.redacted[episode.id] = entry.path
        ep = episode.id if episode else rules.episode_id_of(entry.path)
        if not ep:
            continue
        if ep in ledger.by_id:
            report.problems.append(rules.duplicate_id_problem(ep, entry.path, ledger.by_id[ep]))
        else:
            ledger.by_id[ep] = entry.path
    return ledger


def _check_playbook(report: CheckReport, repo: MemoryRepo, raw_book: bytes | None, ledger: _Ledger) -> None:
    """The playbook parses and each citation resolves in the ledger; a rule whose
    evidence was redacted is a warning."""
    from scarwarden.gate import policy as rules

    pb_rel = repo.playbook_rel
    book, found = rules.parse_playbook(raw_book, pb_rel)
    report.problems.extend(found)
    if raw_book:
        from scarwarden.gate import screen

        text = raw_book.decode("utf-8", "replace")
        report.problems.extend(screen.playbook_problems(text, None, pb_rel, repo.config))
    if book is not None:
        report.count("rules_checked", len(book.all_rules()))
        check_citations(
            report,
            repo,
            book.all_rules(),
            raw_book.decode("utf-8") if raw_book else None,
            ledger.by_id.__contains__,
            "the ledger (committed or staged)",
        )
    if ledger.redacted:
        from scarwarden.gate.redactions import evidence_warnings

        report.warnings.extend(evidence_warnings(book, ledger.redacted, pb_rel))


def _prove_all_receipts(
    report: CheckReport,
    repo: MemoryRepo,
    episodes: list[tuple[str, Episode]],
    playbook_blob: str | None,
    env: Mapping[str, str] | None,
) -> None:
    """Every receipt in the tree re-derived at its playbook version and ledger tree
    (issue 20), as ``verify`` does for the episodes history added."""
    if not episodes:
        return
    from scarwarden.gate.proofs import Prover

    known = [playbook_blob] if playbook_blob else []
    prover = Prover(repo.root, repo.playbook_rel, known=known, env=env, episodes_rel=repo.episodes_rel)
    prover.prove_into(report, episodes)


def _check_all_media(
    report: CheckReport,
    repo: MemoryRepo,
    entries: list[git.StagedEntry],
    attached: list[tuple[str, Episode]],
    env: Mapping[str, str] | None,
) -> None:
    """Every image under memory/media/ named by its hash, every attachment present (issue 19)."""
    from scarwarden.files.media import media_rel
    from scarwarden.gate import media
    from scarwarden.gate.policy import is_under

    folder = media_rel(repo.memory_rel)
    stored = {e.path: e.blob for e in entries if is_under(e.path, folder)}
    if stored:
        report.count("media_checked", len(stored))
        raws = git.cat_file_batch(repo.root, list(stored.values()), env=env)
        report.problems.extend(media.check_added_media(repo, stored, raws))
        if lfs := media.lfs_pointers(raws):  # said, not hidden: their bytes were not seen
            report.count("media_in_lfs", lfs)
    report.problems.extend(media.missing_attachments(repo, attached, env))
