"""``scarwarden redact``: take a leaked episode's content back, on the record.

One commit holds the redaction stub (:mod:`scarwarden.files.redaction`) and a new
episode recording the act (who, why, which fields, what it refs); the gate accepts an
edited episode only in exactly this form. The committed bytes of the episode are what
the stub's hash covers, so the episode must be committed and unchanged in the working
folder. The commit goes through a temporary index with a write journal, as every
write's does (:mod:`scarwarden.files.write_journal`): on any failure (the check
refuses, a hook rejects the commit, a kill) the files are put back as they were, and
git's real index is only touched once HEAD has moved.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from scarwarden import git
from scarwarden.errors import Problem, UsageError, ValidationError
from scarwarden.files import write_journal
from scarwarden.files.atomic import atomic_write, write_lock
from scarwarden.files.episode_fields import EPISODE_ID_RE
from scarwarden.files.episodes import Episode, parse_episode_bytes, render_episode
from scarwarden.files.input_policy import text_problem
from scarwarden.files.redaction import KEPT, already_redacted, build_stub, sha256_hex
from scarwarden.files.write_journal import Planned
from scarwarden.repo import MemoryRepo
from scarwarden.times import utc_now

#: Judges the tree about to be committed (the environment selects a private index);
#: raises to refuse. The CLI passes the provenance gate (files may not import it).
Check = Callable[[Mapping[str, str]], None]

#: Most characters of ``--reason`` (spacing collapsed): a reason is a sentence or two, and
#: the record holding it must stay within the episode size cap (4-byte characters too).
MAX_REASON_CHARS = 10_000


@dataclass(frozen=True)
class Redaction:
    """What ``redact`` did."""

    episode_id: str
    path: str
    #: The fields removed now; empty when there was nothing left to redact.
    fields: tuple[str, ...]
    #: SHA-256 of the bytes removed (the committed file before the redaction); None
    #: when nothing was removed.
    sha256: str | None
    #: The episode recording the act; None when nothing was removed.
    record: Episode | None
    commit: str | None
    #: Fields asked for that an earlier redaction had already removed.
    already: tuple[str, ...] = ()
    #: The attached images whose reference was removed: their files stay in the tree
    #: (media files are append-only; the gate refuses deleting one).
    media_kept: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {
            "episode": self.episode_id,
            "path": self.path,
            "fields": list(self.fields),
            "already_redacted": list(self.already),
            "sha256": self.sha256,
            "record": self.record.id if self.record else None,
            "commit": self.commit,
            "media_kept": list(self.media_kept),
        }


def redact(
    repo: MemoryRepo,
    episode_id: str,
    reason: str,
    *,
    fields: Sequence[str] | None = None,
    by: str | None = None,
    check: Check | None = None,
) -> Redaction:
    """Replace ``episode_id``'s content (or only ``fields``) with a stub and commit it
    with a new episode recording the act.

    ``fields=None`` means every field but ``id`` and ``at``; an empty ``fields`` is refused
    (an unset shell variable must not widen a redaction to everything). Fields an earlier
    redaction removed are skipped; when none is left, nothing is written or committed and
    the result has no ``record`` and no ``commit``."""
    reason = " ".join(reason.split())
    if not reason:
        raise UsageError("--reason must say why", hint='scarwarden redact ep-... --reason "leaked API key"')
    if len(reason) > MAX_REASON_CHARS:
        raise UsageError(
            f"--reason is {len(reason):,} characters; the limit is {MAX_REASON_CHARS:,}: nothing was changed",
            hint="say why in a sentence or two; keep the details elsewhere (an issue, a ticket)",
        )
    if (problem := text_problem(reason)) is not None:  # named here, not as the record's outcome
        raise UsageError(f"--reason {problem}", hint="remove it; text is stored exactly as given")
    if not EPISODE_ID_RE.match(episode_id):
        raise UsageError(f"{episode_id!r} is not an episode ID", hint="IDs look like ep-7k2m9q4x1z")
    with write_lock(repo):
        write_journal.recover(repo)  # a killed write's files first (they are not ours to judge)
        path, old_raw = _committed_episode(repo, episode_id)
        old = parse_episode_bytes(old_raw, path, episodes_dir=repo.episodes_rel)
        chosen, already = _fields(old, fields)
        if not chosen:
            return Redaction(episode_id, path, (), None, None, None, already)
        who = by or git.config_get(repo.root, "user.name") or "unknown"
        record = _record(repo, episode_id, chosen, reason, who)
        digest = sha256_hex(old_raw)
        block = {
            "at": utc_now(),
            "by": who,
            "reason": reason,
            "sha256": digest,
            "record": record.id,
            "fields": list(chosen),
        }
        stub = Episode(build_stub(old.data, block))
        stub_raw = stub.render().encode("utf-8")
        parse_episode_bytes(stub_raw, path, episodes_dir=repo.episodes_rel)  # our own output: must parse
        _refuse_leftover_secrets(repo, stub, path)
        sha = _write_and_commit(
            repo, path, stub_raw, record, _message(episode_id, record, reason, chosen), check
        )
    return Redaction(episode_id, path, chosen, digest, record, sha, already, _media_kept(repo, old, chosen))


def _media_kept(repo: MemoryRepo, old: Episode, chosen: Sequence[str]) -> tuple[str, ...]:
    """The stored files of the attachments a redaction of ``chosen`` took back."""
    from scarwarden.files.media import find_stored

    attached = old.get("attachments") if "attachments" in chosen else None
    found = [find_stored(repo.root, repo.memory_rel, a) for a in attached or () if isinstance(a, str)]
    return tuple(p.relative_to(repo.root).as_posix() for p in found if p is not None)


def _committed_episode(repo: MemoryRepo, episode_id: str) -> tuple[str, bytes]:
    """The episode's path and its committed bytes; it must be committed and unchanged."""
    paths = git.files_named(repo.root, repo.episodes_rel, {f"{episode_id}.yaml"})
    if not paths:
        raise UsageError(
            f"no episode {episode_id} in the ledger", hint="'scarwarden episode list' shows what there is"
        )
    if len(paths) > 1:
        raise ValidationError(f"episode {episode_id} is in more than one file: {', '.join(paths)}")
    path = paths[0]
    raw = git.show_file(repo.root, "HEAD", path) if git.head(repo.root) else None
    if raw is None:
        raise UsageError(
            f"{episode_id} is not committed yet: there is nothing to redact in history",
            hint=f"fix or remove the file before committing it ({path})",
        )
    if git.has_uncommitted_changes(repo.root, path) or (repo.root / path).read_bytes() != raw:
        raise UsageError(
            f"{path} has uncommitted changes",
            hint=f"restore it first: git restore --source=HEAD --staged --worktree -- {path}",
        )
    return path, raw


def _fields(old: Episode, fields: Sequence[str] | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The fields to remove now, and those asked for that are already removed."""
    present = [key for key in old.data if key not in KEPT and key != "redacted"]
    done = already_redacted(old.data)
    if fields is None:
        return tuple(f for f in present if f not in done), ()
    names = list(dict.fromkeys(f.strip() for f in fields if f.strip()))
    if not names:
        raise UsageError(
            "--fields is empty: it names no field to redact",
            hint=f"name them (e.g. --fields action,outcome), or leave --fields out to redact "
            f"every field of {old.id}",
        )
    unknown = [f for f in names if f not in present and f not in done]
    if unknown:
        raise UsageError(
            f"--fields: {', '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} not a field of "
            f"{old.id} that can be redacted",
            hint=f"its fields: {', '.join(present)} (id and at always stay)",
        )
    return tuple(f for f in names if f not in done), tuple(f for f in names if f in done)


def _record(repo: MemoryRepo, episode_id: str, fields: Sequence[str], reason: str, who: str) -> Episode:
    """The new episode that records the act (screened like every episode)."""
    from scarwarden.files.record import prepare, screen

    data = {
        "task": f"Redact {episode_id}",
        "action": f"Removed {', '.join(fields)} from {episode_id} with 'scarwarden redact'",
        "outcome": f"Reason: {reason}",
        "corrected_by": who,
        "tags": ["redaction"],
        "refs": [episode_id],
    }
    [record] = prepare([data], source="redact")
    screen(repo, [record], "--reason")
    return record


def _refuse_leftover_secrets(repo: MemoryRepo, stub: Episode, path: str) -> None:
    """A partial redaction that leaves a credential in another field is no redaction."""
    from scarwarden.files import secret_scan

    found = secret_scan.scan_mapping(
        {k: v for k, v in stub.data.items() if k != "redacted"}, repo.config.secrets.allow
    )
    if found:
        raise ValidationError(
            f"{path}: the redacted episode would still hold a secret; nothing was changed",
            problems=[
                Problem(secret_scan.describe(f), file=path, field=f.field, hint=f"add {f.field} to --fields")
                for f in found
            ],
        )


def _message(episode_id: str, record: Episode, reason: str, fields: Sequence[str]) -> str:
    return (
        f"redact: {episode_id}\n\nReason: {reason}\nFields: {', '.join(fields)}\n\n"
        f"Scarwarden-Redacted: {episode_id}\nScarwarden-Episode: {record.id}\n"
    )


def _write_and_commit(
    repo: MemoryRepo,
    path: str,
    stub_raw: bytes,
    record: Episode,
    message: str,
    check: Check | None,
) -> str:
    planned = [Planned(path, stub_raw), Planned(record.relpath(repo.episodes_rel), record.render().encode())]
    # Journalled, then committed through a temporary index (issue 15): ``check`` and the
    # commit hooks judge the exact tree committed before HEAD moves, git's real index is
    # never locked while a kill could leave the lock, and whatever the user staged stays
    # staged. A killed run is finished or undone by the next writer.
    journal = write_journal.begin(repo, planned)
    try:
        for item in planned:
            atomic_write(repo.root / item.path, item.data)
        return write_journal.commit(repo, journal, message, [item.path for item in planned], check=check)
    except BaseException:
        # The stub goes back to the committed bytes (the episode was unchanged), the
        # record goes, unless the commit landed (an interrupt while HEAD was moving).
        write_journal.recover(repo)
        raise


__all__ = ["Check", "Redaction", "redact", "render_episode"]
