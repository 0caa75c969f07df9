"""The distill commit: its message, and the three ways to land it.

* on the current branch: the playbook is written and committed with
  ``git commit --only`` (whatever else is staged stays staged and out of the commit)
  by :func:`scarwarden.files.playbook_commit.commit_playbook`, the helper ``rule add``
  uses too; the gate judges the tree about to be committed first, in-process, and the
  pre-commit hook, when installed, runs as for any commit;
* on a new branch (``--branch``): the commit is built in a private index file
  (``read-tree`` HEAD, ``update-index`` the new playbook, ``write-tree``,
  ``commit-tree``, ``update-ref``), so HEAD, the current branch, the user's index and
  the working tree are not touched. No hook runs there; the gate runs on the private
  index in-process before the commit is made;
* not at all (``--no-commit``): the playbook is written to the working tree and the
  message saved to ``.scarwarden/distill-message.txt`` for ``git commit -F``.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass

from scarwarden import git
from scarwarden.distill.lessons import Flag
from scarwarden.distill.ops import Change, Drop
from scarwarden.distill.state import CONTRADICTION_TRAILER, COUNT_TRAILER, DISTILLER_TRAILER, EPISODE_TRAILER
from scarwarden.errors import GitError, Problem, UsageError, ValidationError
from scarwarden.files import playbook as pb
from scarwarden.files.atomic import atomic_write
from scarwarden.files.playbook_commit import commit_playbook, playbook_has_edits
from scarwarden.gate.check import check_staged
from scarwarden.llm.client import Usage
from scarwarden.repo import MemoryRepo

MESSAGE_FILE = "distill-message.txt"


@dataclass(frozen=True)
class MessageParts:
    distiller: str  # "offline" or "model <name>"
    changes: Sequence[Change]
    drops: Sequence[Drop]
    distilled: Sequence[str]
    left: Sequence[tuple[str, str]]
    usage: Usage
    calls: int
    contradictions: Sequence[Flag] = ()
    no_lesson: Sequence[tuple[str, str]] = ()
    #: Rules proposed for revision or retirement (their lineage counts, described).
    struggling: Sequence[str] = ()
    #: (episode ID, "cited by PB-..." or "left out: why"): every episode with a correction.
    accounts: Sequence[tuple[str, str]] = ()
    #: Sentences a model wrote that may be injected text (ReviewFlag.describe()).
    review: Sequence[str] = ()


def subject(changes: Sequence[Change]) -> str:
    added = sum(1 for c in changes if c.kind == "add")
    updated = sum(1 for c in changes if c.kind == "update")
    retired = sum(1 for c in changes if c.kind == "retire")
    superseded = sum(1 for c in changes if c.kind == "supersede")
    line = f"distill: +{added} rule{'s' if added != 1 else ''}, ~{updated} updated, -{retired} retired"
    return line + (f", {superseded} superseded" if superseded else "")


#: The commit body's section of sentences flagged for the reviewer (distill/injection.py).
REVIEW_HEADING = "Review: sentences that may be injected episode text rather than a lesson (read them twice):"


def _review(flags: Sequence[str]) -> list[str]:
    return ["", REVIEW_HEADING, *(f"- {line}" for line in flags)] if flags else []


def message(parts: MessageParts) -> str:
    """Subject, a body listing every change and every drop, then the trailers."""
    n = len(parts.distilled)
    who = (
        "the offline distiller (deterministic, no model)"
        if parts.distiller == "offline"
        else f"the model {parts.distiller.removeprefix('model ')}"
    )
    lines = [subject(parts.changes), "", f"Distilled {n} new episode{'s' if n != 1 else ''} with {who}."]
    if parts.changes:
        lines.append("")
        lines += [c.describe() for c in parts.changes]
    else:
        lines += ["", "No rule changed: the episodes taught nothing the playbook does not say."]
    if parts.drops:
        lines += ["", "Dropped by the provenance gate (citations must resolve in the ledger):"]
        lines += [f"- {d.describe()}" for d in parts.drops]
    lines += _review(parts.review)
    if parts.contradictions:
        lines += ["", "Contradictions found (newer evidence wins; 'may' = not decided, for a human):"]
        lines += [f"- {f.describe()}" for f in parts.contradictions]
    if parts.struggling:
        lines += ["", "Proposed for revision or retirement (corrected in at least half of 3+ applications):"]
        lines += [f"- {line}" for line in parts.struggling]
    if parts.no_lesson:
        lines += ["", "Taught nothing (marked distilled):"]
        lines += [f"- {ep}: {why}" for ep, why in parts.no_lesson]
    if parts.accounts:
        cited = sum(1 for _, status in parts.accounts if status.startswith("cited"))
        left = len(parts.accounts) - cited
        lines += ["", f"Episodes with a correction: {cited} cited by an active rule, {left} left out:"]
        lines += [f"- {ep}: {status}" for ep, status in parts.accounts]
    if parts.left:
        lines += ["", "Left for later (not marked distilled):"]
        lines += [f"- {ep}: {why}" for ep, why in parts.left]
    lines += ["", f"{DISTILLER_TRAILER}: {parts.distiller}", f"{COUNT_TRAILER}: {n}"]
    if parts.distiller != "offline":
        u = parts.usage
        lines += [
            f"Scarwarden-Tokens: {u.total_tokens}" + (" (estimated as characters/4)" if u.estimated else ""),
            f"Scarwarden-Tokens-Prompt: {u.prompt_tokens}",
            f"Scarwarden-Tokens-Completion: {u.completion_tokens}",
            f"Scarwarden-Model-Calls: {parts.calls}",
        ]
    else:
        lines.append("Scarwarden-Tokens: 0")
    if parts.drops:
        lines.append(f"Scarwarden-Dropped: {len(parts.drops)}")
    rules = [rid for c in parts.changes for rid in (c.rule_id, c.replaced_by) if rid]
    lines += [f"Scarwarden-Rule: {rid}" for rid in dict.fromkeys(rules)]
    lines += [
        f"{CONTRADICTION_TRAILER}: {f.rule} {f.episode_id}"
        for f in parts.contradictions
        if not f.decided and f.rule.startswith("PB-")
    ]
    lines += [f"{EPISODE_TRAILER}: {ep}" for ep in parts.distilled]
    return "\n".join(lines) + "\n"


def _edits_error(repo: MemoryRepo) -> UsageError:
    return UsageError(
        f"{repo.playbook_rel} has uncommitted changes; distill builds on the committed "
        "playbook and would overwrite them",
        hint="commit or discard them first, or use --branch NAME (leaves the working "
        "tree alone) or --no-commit (builds on your edited file)",
    )


def require_clean_playbook(repo: MemoryRepo) -> None:
    """Refuse to commit over uncommitted edits of the playbook (they would be lost)."""
    if playbook_has_edits(repo):
        raise _edits_error(repo)


def check_branch_name(repo: MemoryRepo, name: str) -> None:
    if not git.valid_branch_name(repo.root, name):
        raise UsageError(
            f"{name!r} is not a valid branch name", hint="for example: --branch distill/2026-11-30"
        )
    if git.rev_parse(repo.root, f"refs/heads/{name}") is not None:
        raise UsageError(
            f"branch {name} already exists", hint="choose a new name; distill never moves an existing branch"
        )


def refuse_unresolved(
    repo: MemoryRepo, book: pb.Playbook, text: str, ledger: Container[str], head: str
) -> None:
    """Refuse to build on a playbook whose rules cite an episode the ledger lacks (one
    let past the hooks with SCARWARDEN_SKIP=1): the gate of the distill commit judges
    only the rules it changes, so the citation would ride along into a reviewed commit."""
    from scarwarden.gate import policy as rules

    problems: list[Problem] = []
    origins: dict[str, tuple[str, str] | None] = {}  # episode ID -> (commit, subject) that added it
    for rule in book.all_rules():
        for ep in (ep for ep in rule.episode_ids if ep not in ledger):
            if ep not in origins and len(origins) < 5:  # each reads the playbook's history: a few only
                came = git.log(repo.root, "-1", f"-S{ep}", head, "--", repo.playbook_rel)
                origins[ep] = (came[0].sha, came[0].subject) if came else None
            origin = origins.get(ep)
            hint = (
                (f"commit {origin[0][:10]} ('{origin[1]}') added it; " if origin else "")
                + f"cite the episodes that taught {rule.id} on its '- Learnt in:' line and commit "
                "that (the gate checks the re-cited rule); 'scarwarden verify' names every commit "
                "let past the gate"
            )
            problems.append(
                rules.problem(
                    "citation-missing",
                    f"{rule.id} cites {ep}, which is not an episode in the ledger at HEAD ({head[:10]})",
                    file=repo.playbook_rel,
                    line=rules.learnt_in_line(text, rule),
                    field="Learnt in",
                    hint=hint,
                    rule=rule.id,
                    episode=ep,
                    commit=origin[0] if origin else None,
                )
            )
    if problems:
        raise ValidationError(
            "the playbook cites an episode that is not in the ledger; nothing was distilled",
            problems=problems,
            hint="no provenance, no rule: distill commits nothing on top of such a rule; fix it "
            "as said above, then distill again",
        )


def commit_here(repo: MemoryRepo, data: bytes, text: str) -> str:
    """Write the playbook and commit only it, once the gate passed the tree about to be
    committed; the file and git's index are put back if anything fails."""
    sha = commit_playbook(
        repo, data, text, check=lambda env: gate(repo, env), refuse_edits=_edits_error(repo), allow_empty=True
    )
    assert sha is not None  # a message was given: committed, or raised
    return sha


def gate(repo: MemoryRepo, env: Mapping[str, str]) -> None:
    """The provenance gate on the tree in the index ``env`` selects; mandatory for every
    distill commit (our own citations are checked already: a refusal here is a bug)."""
    report = check_staged(repo, env=env)
    if not report.ok:
        # The screens judge content: text distill copied from the committed playbook or
        # an episode let past the hooks (SCARWARDEN_SKIP=1), or a model wrote, is no bug.
        copied = all(p.code in ("secret-found", "personal-data") for p in report.problems)
        raise ValidationError(
            "the distilled playbook does not pass the provenance gate",
            problems=list(report.problems),
            hint="nothing was committed; the text flagged above came from the committed playbook "
            "or an episode (let past the hooks), or from the model: take it out where it came "
            "from as each hint says ('scarwarden redact' for an episode), then distill again"
            if copied
            else "nothing was committed; please report this as a bug",
        )


def commit_on_branch(repo: MemoryRepo, branch: str, base: str, data: bytes, text: str) -> str:
    """Commit the playbook on a new branch from ``base``; nothing the user sees moves."""
    with git.temporary_index(repo.root, base) as env:
        git.stage_bytes(repo.root, repo.playbook_rel, data, env=env)
        gate(repo, env)
        tree = git.write_tree(repo.root, env=env)
    sha = git.commit_tree(repo.root, tree, [base], text)
    try:
        git.create_branch(repo.root, branch, sha)
    except GitError as exc:
        raise UsageError(f"cannot create branch {branch}: {exc.message}") from None
    return sha


def refuse_uncommitted_run(repo: MemoryRepo, head: str, playbook: str, distilled: Container[str]) -> None:
    """``--no-commit`` over an earlier one not committed yet (the playbook changed since
    HEAD, the saved message lists episodes HEAD has not distilled): its message would be
    replaced, and a commit made with the new one would describe part of what it commits."""
    path = repo.state_dir / MESSAGE_FILE
    try:
        saved = path.read_bytes().decode("utf-8", "replace") if path.is_file() else ""
    except OSError:
        return  # write_only names what is wrong with the message's place
    committed = (git.show_file(repo.root, head, repo.playbook_rel) or b"").decode("utf-8", "replace")
    lines = saved.splitlines()
    listed = (line.partition(":")[2].strip() for line in lines if line.startswith(EPISODE_TRAILER))
    if playbook == committed or all(ep in distilled or ep in committed for ep in listed):
        return
    rel = str(path.relative_to(repo.root))
    raise UsageError(
        f"an earlier 'distill --no-commit' is not committed yet ({rel} and {repo.playbook_rel}); "
        "a second one would replace its message, and nothing was distilled",
        hint=f"commit it first: git commit -F {rel} {repo.playbook_rel}; or discard both "
        f"(git checkout -- {repo.playbook_rel}; delete {rel}), then distill again",
    )


def write_only(repo: MemoryRepo, data: bytes | None, text: str) -> str:
    """``--no-commit``: save the message; write the playbook (``None``: no rule changed,
    the message alone records the episodes); return the message's path.
    The message first: a playbook written without it would cite the episodes, so the next
    run would find nothing new, and its distilled-episode lines would be lost."""
    repo.state_dir.mkdir(parents=True, exist_ok=True)
    ignore = repo.state_dir / ".gitignore"  # the state folder is never committed
    if not ignore.exists():
        ignore.write_text("*\n")
    path = repo.state_dir / MESSAGE_FILE
    atomic_write(path, text.encode("utf-8"))
    if data is not None:
        atomic_write(repo.playbook_path, data)
    return str(path.relative_to(repo.root))
