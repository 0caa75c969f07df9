"""Writing to the ledger: episodes in, atomically, committed with provenance trailers.

All-or-nothing: every episode in a batch is validated before the first byte is
written; files go through a temporary file and ``os.replace``, recorded first in the
write journal (:mod:`scarwarden.files.write_journal`); if the commit (or, with
``--no-commit``, the staging) fails or is killed, the files written are removed, so a
failed ``episode add`` leaves the repository as it found it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from scarwarden import git
from scarwarden.errors import Problem, ScarwardenError, UsageError, ValidationError
from scarwarden.files import unwritten, write_journal
from scarwarden.files.atomic import atomic_write, remove_dead_temps, write_lock
from scarwarden.files.episode_input import normalise_input
from scarwarden.files.episodes import EPISODE_ID_RE, Episode, locate, mint_id
from scarwarden.files.media import Image
from scarwarden.files.write_journal import Planned
from scarwarden.git.index_commit import Check
from scarwarden.records import replace
from scarwarden.repo import MemoryRepo


def commit_message(episodes: Sequence[Episode]) -> str:
    if len(episodes) != 1:
        return batch_message([ep.id for ep in episodes])
    task = " ".join(episodes[0].task.split())
    return _message(f"episode: {task[:60]}{'...' if len(task) > 60 else ''}", [episodes[0].id])


def batch_message(ids: Sequence[str]) -> str:
    """:func:`commit_message` of a batch of several episodes, from their IDs alone."""
    return _message(f"episodes: import {len(ids)} episodes", ids)


def _message(subject: str, ids: Sequence[str]) -> str:
    trailers = "\n".join(f"Scarwarden-Episode: {ep_id}" for ep_id in ids)
    return f"{subject}\n\n{trailers}\n"


def prepare(
    inputs: Sequence[Any], *, source: str, now: str | None = None, existing_ids: set[str] | None = None
) -> list[Episode]:
    """Validate a batch; every problem of every item is reported together."""
    if not inputs:
        raise ValidationError(f"{source}: no episode in the input")
    episodes: list[Episode] = []
    problems: list[Problem] = []
    seen: set[str] = set()
    # parse_input_documents' list knows each item's lines; a plain list does not.
    lines_of = getattr(inputs, "where", None)
    for number, item in enumerate(inputs, 1):
        try:
            ep = normalise_input(item, source=source, now=now)
        except ValidationError as exc:
            found = locate(
                exc.problems or [Problem(exc.message, file=source)],
                lines_of(number - 1) if lines_of else None,
            )
            if len(inputs) > 1:
                found = [replace(p, message=f"{p.message} (item {number})") for p in found]
            problems.extend(found)
            continue
        if ep.id in seen:
            raise ValidationError(f"{source}: episode ID {ep.id} appears twice in the input (item {number})")
        seen.add(ep.id)
        episodes.append(ep)
    if problems:
        raise ValidationError(f"{source}: invalid episode input; nothing was written", problems=problems)
    taken = set(existing_ids or ())
    for i, ep in enumerate(episodes):
        if ep.id in taken:
            if isinstance(inputs[i], dict) and inputs[i].get("id"):
                raise ValidationError(
                    f"episode {ep.id} already exists in the ledger",
                    hint="episodes are append-only; record a new one that refs it",
                )
            data = dict(ep.data)
            data["id"] = mint_id()  # a clash of fresh random IDs: astronomically rare
            episodes[i] = Episode(data)
        taken.add(episodes[i].id)
    return episodes


def add_episodes(
    repo: MemoryRepo,
    inputs: Sequence[Any],
    *,
    commit: bool = True,
    source: str = "<input>",
    now: str | None = None,
    message: str | None = None,
    redact_pii: bool = False,
    warn: Callable[[Problem], None] | None = None,
    images: Sequence[Image] = (),
    check: Check | None = None,
    allow_unknown_rules: bool = False,
    locked: bool = False,
) -> list[Episode]:
    """Validate, write and commit (or stage) episodes; return them as stored.
    ``locked``: the caller holds :func:`write_lock` (it chose ``inputs`` under it).

    ``check`` (every door passes the provenance gate's,
    :func:`scarwarden.gate.door.gate_check`, issue 27) judges the exact tree about to be
    committed (with ``commit=False``: HEAD plus the files staged) before anything lands,
    hooks installed or not; a refusal takes the files back. A ``rules_applied`` entry
    naming no rule of this memory's playbook is refused unless ``allow_unknown_rules``
    (an import of another memory's episodes) or the episode says ``source: import``.

    ``images`` (checked :class:`~scarwarden.files.media.Image` s, issue 19) are stored
    under memory/media/ and committed with the episodes, which name them in
    ``attachments``: each stored once, however many episodes attach it.

    Every episode is screened first (:func:`screen`): a credential refuses the batch,
    personal data is refused or passed to ``warn`` (once the batch is written: a refused
    batch's warnings name IDs never written) as ``privacy:`` says;
    ``redact_pii`` replaces personal data with typed placeholders before all that."""
    if git.toplevel(repo.root) is None:
        raise ScarwardenError(f"{repo.root} is not a git repository")
    if redact_pii:
        inputs = _redact_inputs(inputs)
    with nullcontext() if locked else write_lock(repo):
        write_journal.recover(repo)
        episodes, warnings = _prepare_batch(repo, inputs, source, now, allow_unknown_rules)
        _land_batch(repo, episodes, images, commit=commit, message=message, check=check, source=source)
    if warn is not None:
        for problem in warnings:
            warn(problem)
    return episodes


def _land_batch(
    repo: MemoryRepo,
    episodes: Sequence[Episode],
    images: Sequence[Image],
    *,
    commit: bool,
    message: str | None,
    check: Check | None,
    source: str,
) -> None:
    """Journal, write and commit (or stage) the prepared batch, under the caller's write
    lock; anything that fails or is interrupted is undone from the journal. A refusal
    names each episode as :func:`screen` does, not by the file it never had."""
    planned = [Planned(ep.relpath(repo.episodes_rel), ep.render().encode("utf-8")) for ep in episodes]
    try:
        land(repo, planned, images, commit=commit, message=message or commit_message(episodes), check=check)
    except ValidationError as exc:
        raise unwritten.renamed(exc, source, [p.path for p in planned], [ep.id for ep in episodes]) from None


def land(
    repo: MemoryRepo,
    planned: Sequence[Planned],
    images: Sequence[Image] = (),
    *,
    commit: bool = True,
    message: str,
    check: Check | None,
) -> None:
    """:func:`_land_batch` of files already rendered (``planned`` may read each from
    disk as it is iterated: an import's batch is not held in memory)."""
    for item in planned:
        _refuse_links(repo, item.path)
        if (repo.root / item.path).exists():
            raise ValidationError(
                f"{item.path} already exists", hint="episodes are append-only; never overwrite one"
            )
    # Recorded before the first byte is written: a killed run is undone (or
    # finished) by the next writer, and leaves nothing behind (issue 15).
    # New files: ids_in_ledger found no file of these names in git's index.
    record = write_journal.begin(repo, planned, new=True)
    try:
        written = _write_batch(repo, record, planned, images)
        if commit:
            # Through a temporary index: git's real index is never locked by us while
            # we could be killed, and whatever the user staged stays staged, out of
            # the commit.
            write_journal.commit(repo, record, message, written, check=check)
        else:
            # As git add, a kill cannot cut it.
            write_journal.stage(repo, record, written, check=check)
    except BaseException:
        # Undone from the journal: the files go unless the commit (or the staging)
        # landed (an interrupt while HEAD or the index was moving): then they stay.
        write_journal.recover(repo)
        raise


def _refuse_links(repo: MemoryRepo, path: str) -> None:
    """Refuse a folder on ``path``'s way that is a symbolic link or a submodule
    (``memory/episodes`` committed as a link to another folder): git stages no file
    beyond either, so the episode would be written and then refused with git's "beyond a
    symbolic link" or "appears as both a file and as a directory"."""
    parts = path.split("/")[:-1]
    for n in range(1, len(parts) + 1):
        folder = "/".join(parts[:n])
        kind = "symbolic link" if (repo.root / folder).is_symlink() else _submodule(repo, folder)
        if kind:
            raise UsageError(
                f"{folder} is a {kind}; git stages no episode through it: nothing was written",
                hint=f"make {folder} a plain folder of the repository (git rm --cached {folder}, "
                "then move the files it points to in its place); 'scarwarden check --all' names it",
            )


def _submodule(repo: MemoryRepo, folder: str) -> str:
    """``"submodule"`` when git's index holds ``folder`` as one. Asked only of a folder
    that looks like one (empty, as before 'git submodule update', or holding ``.git``):
    a ledger folder is never empty (``.gitkeep``), so no episode add pays for the listing."""
    where = repo.root / folder
    if not where.is_dir() or (not (where / ".git").exists() and any(where.iterdir())):
        return ""
    gitlink = any(e.path == folder and e.mode == "160000" for e in git.ls_files_stage(repo.root, folder))
    return "submodule" if gitlink else ""


def _prepare_batch(
    repo: MemoryRepo,
    inputs: Sequence[Any],
    source: str,
    now: str | None,
    allow_unknown_rules: bool = False,
) -> tuple[list[Episode], list[Problem]]:
    """The batch validated and screened, IDs settled; and its warnings."""
    # Minted IDs need no look-up (50 random bits, never reused); an ID that is not
    # valid is refused by prepare() whatever the files hold.
    candidate_ids = [
        str(item["id"])
        for item in inputs
        if isinstance(item, dict) and item.get("id") and EPISODE_ID_RE.match(str(item["id"]))
    ]
    existing = ids_in_ledger(repo, candidate_ids)
    episodes = prepare(inputs, source=source, now=now, existing_ids=existing)
    warnings = screen(repo, episodes, source)
    imported: list[Episode] = []
    own: list[Episode] = []  # not "ep not in imported": a comparison of every pair
    for ep in episodes:
        (imported if allow_unknown_rules or ep.get("source") == IMPORTED else own).append(ep)
    refuse_unknown_rules(unknown_rules_applied(repo, own, source, batch=episodes), source)
    return episodes, warnings + unknown_rules_applied(repo, imported, source)


def _write_batch(
    repo: MemoryRepo, record: write_journal.Journal, planned: Sequence[Planned], images: Sequence[Image]
) -> list[str]:
    """Store the images (journalled) and write the episodes; the paths to commit."""
    written: list[str] = []
    if images:
        created = _store_media(repo, images, written)
        write_journal.add_files(repo, record, [Planned(p, (repo.root / p).read_bytes()) for p in created])
    cleaned: set[Path] = set()
    for item in planned:
        written.append(item.path)
        target = repo.root / item.path
        if target.parent not in cleaned and target.parent.is_dir():
            # A killed add's temporary files, in one listing of the folder for the batch.
            names = {Path(p.path).name for p in planned if (repo.root / p.path).parent == target.parent}
            remove_dead_temps(target.parent, names)
        cleaned.add(target.parent)
        atomic_write(target, item.data, tidy=False)  # its folder tidied above
    return written


def _store_media(repo: MemoryRepo, images: Sequence[Image], written: list[str]) -> list[str]:
    """Store the images; add to ``written`` those git does not track yet (to stage and
    commit). Returns the files this call created (to remove if the commit fails)."""
    from scarwarden.files import media

    folder = media.media_rel(repo.memory_rel)
    paths = list(dict.fromkeys(f"{folder}/{image.name}" for image in images))
    tracked = {entry.path for entry in git.ls_files_stage(repo.root, *paths)}
    created = media.store(repo.root, repo.memory_rel, images)
    written += [path for path in paths if path not in tracked]
    return created


def screen(repo: MemoryRepo, episodes: Sequence[Episode], source: str) -> list[Problem]:
    """Refuse the batch if an episode holds a credential or personal data that
    ``privacy:`` refuses (every problem together, nothing written); return the
    warnings. The problems name the episode and field, never the value: a warning's
    episode by its ID (it is written), a refused one by ``source`` (its place in a
    batch), for the ID of an episode never written finds nothing."""
    from scarwarden.files import privacy, secret_scan

    settings = repo.config.privacy
    refused: list[Problem] = []
    warned: list[Problem] = []
    for number, ep in enumerate(episodes, 1):
        named = {"warn": f"{source} ({ep.id})", "refuse": unwritten.name(source, number, len(episodes))}
        for found in secret_scan.scan_mapping(ep.data, repo.config.secrets.allow):
            message, hint = secret_scan.describe(found), secret_scan.hint(found)
            refused.append(Problem(message, file=named["refuse"], field=found.field, hint=hint))
        for action, out in (("refuse", refused), ("warn", warned)):
            for found in privacy.scan_mapping(ep.data, settings.kinds(action)):
                out.append(
                    Problem(
                        f"holds personal data: {found.label} (privacy.{found.kind}: {action})",
                        file=named[action],
                        field=found.field,
                        hint="record it with --redact-pii (typed placeholders), or take it out",
                    )
                )
    if refused:
        what = "a secret" if any("holds a secret" in p.message for p in refused) else "personal data"
        raise ValidationError(f"{source}: refused, it holds {what}; nothing was written", problems=refused)
    return warned


#: An episode with this ``source`` was imported: its ``rules_applied`` may name another
#: memory's rules (recorded as given, with a warning).
IMPORTED = "import"


def unknown_rules_applied(
    repo: MemoryRepo, episodes: Sequence[Episode], source: str, *, batch: Sequence[Episode] | None = None
) -> list[Problem]:
    """``rules_applied`` entries that name no rule this memory's playbook has (retired
    rules count). Lineage counts such an entry for no rule (issue 18); every write door
    refuses it (issue 27) unless the episode was imported (``source: import``: it may
    name another memory's rules), for which it is only a warning. ``batch``: the whole
    batch, when the problems refuse it: an episode is then named by its place in it
    (``source`` alone in a batch of one), not by the ID it is never written under."""
    named = {rule for ep in episodes for rule in ep.get("rules_applied") or []}
    if not named:
        return []
    known: set[str] = set()
    if repo.playbook_path.is_file():
        from scarwarden.files import playbook as pb

        try:
            book = pb.parse(repo.playbook_path.read_text(encoding="utf-8"), source=repo.playbook_rel)
        except (ScarwardenError, OSError, UnicodeDecodeError):
            return []  # the gate reports a broken playbook
        known = {rule.id for rule in book.all_rules()}
    places = {id(ep): number for number, ep in enumerate(batch or (), 1)}

    def where(ep: Episode) -> str:
        if batch is None:
            return f"{source} ({ep.id})"
        return unwritten.name(source, places[id(ep)], len(batch))

    return [
        Problem(
            f"{rule} is not a rule in {repo.playbook_rel}",
            file=where(ep),
            field="rules_applied",
            hint="name a rule this memory has ('scarwarden rule list --retired' shows them), or "
            "leave it out; an episode imported from another memory says source: import",
        )
        for ep in episodes
        for rule in ep.get("rules_applied") or []
        if rule not in known
    ]


def refuse_unknown_rules(problems: Sequence[Problem], source: str) -> None:
    """Refuse the batch when ``problems`` (:func:`unknown_rules_applied`) is not empty."""
    if problems:
        raise ValidationError(
            f"{source}: rules_applied names a rule this memory never had; nothing was written",
            problems=list(problems),
            hint="name a rule this memory has, or leave it out; an episode imported from "
            "another memory says source: import (then it is recorded with a warning)",
        )


def _redact_inputs(inputs: Sequence[Any]) -> Sequence[Any]:
    """The inputs with personal data replaced (same list object: it knows the lines)."""
    from scarwarden.files import privacy

    items = inputs if isinstance(inputs, list) else list(inputs)
    for i, item in enumerate(items):
        if isinstance(item, dict):
            items[i] = privacy.redact_mapping(item)[0]
    return items


def ids_in_ledger(repo: MemoryRepo, ids: Iterable[str]) -> set[str]:
    """The episode IDs among ``ids`` that a file ``<ID>.yaml`` already has, anywhere
    under the episodes folder: in git's index (committed or staged) or in the working
    tree (untracked too).

    Read from the files, never the index: they are the truth, and the cache may not
    have seen the latest commit yet. Any depth counts, so a misplaced copy, which the
    gate would refuse as a duplicate, is found too.
    """
    names = {f"{ep_id}.yaml" for ep_id in ids}
    return {
        path.rpartition("/")[2].removesuffix(".yaml")
        for path in git.files_named(repo.root, repo.episodes_rel, names)
    }
