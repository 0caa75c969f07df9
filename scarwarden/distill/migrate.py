"""``distill --migrate``: sentence maps for a playbook written before them (issue 25).

A rule without ``- Sentences from:`` says nothing of which citation taught which
sentence ("from the rule's citations"). Migrating maps each sentence to the rule's
citations that share content words with it (the support check's reading:
:func:`scarwarden.gate.support.content`); a sentence none of them supports stays
unmapped, so the check keeps warning about it rather than refusing it. The text, the
citations and every other field are unchanged; one commit.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from scarwarden import git
from scarwarden.distill import state
from scarwarden.errors import UsageError
from scarwarden.files import playbook as pb
from scarwarden.files.atomic import write_lock
from scarwarden.files.playbook_commit import commit_playbook
from scarwarden.files.playbook_edit import load_playbook
from scarwarden.files.playbook_sentences import Source
from scarwarden.gate.support import content, episode_words
from scarwarden.regular_files import read_regular
from scarwarden.repo import MemoryRepo


@dataclass
class Migration:
    #: (rule ID, sentences mapped, sentences left unmapped).
    rules: list[tuple[str, int, int]] = field(default_factory=list)
    commit: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "commit": self.commit,
            "rules": [{"rule_id": r, "mapped": m, "unmapped": u} for r, m, u in self.rules],
        }


def mapped(rule: pb.Rule, words: dict[str, frozenset[str]]) -> tuple[Source, ...]:
    """The map of a rule without one: each sentence to the citations supporting it."""
    out: list[Source] = []
    for said in rule.said():
        wanted = content(said.sentence)
        eps = tuple(ep for ep in rule.episode_ids if wanted & words.get(ep, frozenset()))
        if eps:
            out.append(Source(said.number, eps))
    return tuple(out)


def migrate(repo: MemoryRepo, *, dry_run: bool = False) -> Migration:
    """Write sentence maps for every active rule without one; commit unless ``dry_run``."""
    head = git.head(repo.root)
    if head is None:
        raise UsageError("the repository has no commits yet", hint="commit the memory first")
    result = Migration()
    with write_lock(repo):
        book = original = load_playbook(repo)
        todo = [rule for rule in book.rules if not rule.sources]
        ledger = state.ledger_at(repo, head)
        ids = sorted({ep for rule in todo for ep in rule.episode_ids if ep in ledger})
        words = {ep.id: episode_words(ep) for ep in state.load_episodes(repo, ledger, ids)[0]}
        for rule in todo:
            sources = mapped(rule, words)
            if sources:
                book = book.with_rule(replace(rule, sources=sources))
                result.rules.append((rule.id, len(sources), len(rule.said()) - len(sources)))
        if not result.rules or dry_run:
            return result
        subject = (
            f"playbook: sentence maps for {len(result.rules)} rule{'s' if len(result.rules) != 1 else ''}"
        )
        body = "\n".join(f"- {r}: {m} sentences mapped, {u} left unmapped" for r, m, u in result.rules)
        text = read_regular(repo.playbook_path).decode("utf-8")  # as it is: its line endings kept
        data = pb.spliced(text, original, book, source=repo.playbook_rel).encode("utf-8")
        # A hand edit would ride along unannounced in a commit that says "sentence maps".
        edits = UsageError(
            f"{repo.playbook_rel} has uncommitted changes; --migrate would commit them too",
            hint="commit or discard them first (--migrate --dry-run shows the maps without writing)",
        )
        result.commit = commit_playbook(repo, data, f"{subject}\n\n{body}\n", refuse_edits=edits)
    return result
