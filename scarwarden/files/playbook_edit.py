"""Hand-written rules: ``scarwarden rule add``."""

from __future__ import annotations

import re
from collections.abc import Sequence

from scarwarden import git
from scarwarden.errors import UsageError, ValidationError
from scarwarden.files import playbook as pb
from scarwarden.files.record import atomic_write, write_lock
from scarwarden.index.store import open_index
from scarwarden.repo import MemoryRepo


def title_from_text(text: str, words: int = 8) -> str:
    """A title from the rule's first sentence (at most ``words`` words)."""
    first = re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0].rstrip(".!?")
    parts = first.replace(":", " ").split()
    title = " ".join(parts[:words])
    return title + ("..." if len(parts) > words else "")


def resolve_citations(repo: MemoryRepo, episode_ids: Sequence[str]) -> list[str]:
    """The cited IDs that are *not* episodes committed or staged in the ledger."""
    return _locate_citations(repo, episode_ids)[1]


def _locate_citations(repo: MemoryRepo, episode_ids: Sequence[str]
                      ) -> tuple[dict[str, str], list[str]]:
    """(ID -> path of each cited episode in git's index, the IDs that are not there)."""
    with open_index(repo) as index:
        paths = {ep: index.episode_path(ep) for ep in episode_ids}
    known = [p for p in paths.values() if p]
    staged = {e.path for e in git.ls_files_stage(repo.root, *known)} if known else set()
    found = {ep: path for ep, path in paths.items() if path is not None and path in staged}
    return found, [ep for ep in paths if ep not in found]


def _not_in_head(repo: MemoryRepo, paths: Sequence[str]) -> list[str]:
    """The ``paths`` (staged) that HEAD's tree does not hold yet."""
    if not paths:
        return []
    if git.head(repo.root) is None:
        return sorted(paths)
    committed = {e.path for e in git.ls_tree(repo.root, "HEAD", *paths)}
    return sorted(p for p in paths if p not in committed)


def load_playbook(repo: MemoryRepo) -> pb.Playbook:
    try:
        raw = repo.playbook_path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return pb.empty()
    except UnicodeDecodeError:
        raise ValidationError(f"{repo.playbook_rel} is not valid UTF-8") from None
    return pb.parse(raw, source=repo.playbook_rel)


def save_playbook(repo: MemoryRepo, playbook: pb.Playbook) -> None:
    atomic_write(repo.playbook_path, pb.render(playbook).encode("utf-8"))


def add_rule(repo: MemoryRepo, *, text: str, tags: Sequence[str], cites: Sequence[str],
             title: str | None = None, commit: bool = True) -> pb.Rule:
    """Add a hand-written rule citing ``cites``; refuse citations that do not resolve."""
    with write_lock(repo):
        playbook = load_playbook(repo)
        rule = pb.make_rule(playbook.next_id(), title or title_from_text(text), text, tags, cites)
        found, missing = _locate_citations(repo, rule.episode_ids)
        if missing:
            raise ValidationError(
                f"cannot add the rule: {', '.join(missing)} "
                f"{'is' if len(missing) == 1 else 'are'} not in the ledger (committed or staged)",
                hint="no provenance, no rule: cite episodes that exist "
                     "('scarwarden episode list'), or record the episode first")
        if commit and git.head(repo.root) is not None and not git.run_ok(
                repo.root, "diff", "--quiet", "HEAD", "--", repo.playbook_rel):
            raise UsageError(
                f"{repo.playbook_rel} has uncommitted changes; rule add would commit them too",
                hint="commit or discard them first, or use --no-commit")
        original = repo.playbook_path.read_bytes() if repo.playbook_path.exists() else None
        save_playbook(repo, playbook.with_rule(rule))
        try:
            git.add(repo.root, [repo.playbook_rel])
            if commit:
                # A cited episode that is staged but not committed goes into this commit
                # too: a commit whose rule cites an episode outside its own tree is what
                # the gate rejects and `verify` reports.
                staged_episodes = _not_in_head(repo, list(found.values()))
                trailers = [f"Scarwarden-Rule: {rule.id}"] + [
                    f"Scarwarden-Episode: {ep}" for ep, path in found.items()
                    if path in staged_episodes]
                message = (f"rule: add {rule.id} {rule.title}\n\n"
                           f"Learnt in: {', '.join(rule.episode_ids)}\n\n"
                           + "\n".join(trailers) + "\n")
                git.commit(repo.root, message, only=[repo.playbook_rel, *staged_episodes])
        except BaseException:
            if original is not None:
                atomic_write(repo.playbook_path, original)
                git.add(repo.root, [repo.playbook_rel])
            else:
                git.unstage(repo.root, [repo.playbook_rel])
                repo.playbook_path.unlink(missing_ok=True)
            raise
    return rule
