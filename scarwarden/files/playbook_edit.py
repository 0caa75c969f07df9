"""Hand-written rules (``scarwarden rule add``), loading and saving the playbook, and the
one function that titles a rule written without a title."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePosixPath

from scarwarden import git
from scarwarden.errors import Problem, UsageError, ValidationError
from scarwarden.files import playbook as pb
from scarwarden.files.atomic import atomic_write, write_lock
from scarwarden.files.episodes import parse_episode_bytes
from scarwarden.files.playbook_commit import Check, commit_playbook
from scarwarden.files.playbook_sentences import Source
from scarwarden.files.playbook_sentences import parse as parse_sources
from scarwarden.files.rule_ids import DRAFT_ID
from scarwarden.regular_files import read_regular, read_regular_text
from scarwarden.repo import MemoryRepo

#: Most words of a title cut from the first sentence (``rule add``, a model's ``add``).
TITLE_WORDS = 8
#: Most words of a title cut from the first clause (the offline distiller).
CLAUSE_TITLE_WORDS = 10
#: Words a clause title must not end on ("... is high priority and").
_DANGLING = frozenset(
    "a an the and or but nor of to in on at by for with from into as than "
    "that which who if when while so such its their your our this these "
    "is are was be it they them we you he she".split()
)
#: Above this many IDs, one listing of the episodes folder is cheaper than one pathspec
#: per ID (git matches every index entry against every pattern).
_MAX_ID_PATTERNS = 8
#: Most characters of a rule's text, and of its title, that ``rule add`` takes (stripped):
#: a recall task's bound (a rule is a few sentences; its evidence is in the episodes).
MAX_RULE_CHARS = 20_000
#: A line of a rule's text that a reader, or a Markdown view of the playbook (a pull
#: request on GitHub), takes for the playbook's own structure though the parser reads it
#: as text: a heading or a field line indented or bulleted otherwise, or a setext
#: underline ('===', '---') that makes the line above it a heading.
_LOOKS_STRUCTURAL = re.compile(
    r"^[ \t]*(?:#{1,6}(?:[ \t]|$)|[-*+][ \t]+(?:Tags|Learnt in|Sentences from|Applies to|Retired|"
    r"Replaced by):|(?:=+|-+)[ \t]*$)"
)
#: An intent-to-add entry ('git add -N') has this blob: its content is not staged.
_EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"


def title_from_text(text: str, words: int | None = None, *, clause: bool = False) -> str:
    """The title of a rule written without one, made from its text.

    Two styles, each kept exactly as its callers have always titled rules:

    * default (``rule add``; a model's ``add`` that gave no title): the first sentence,
      colons read as spaces, at most ``words`` (8) words, ``...`` when it was cut;
    * ``clause=True`` (the offline distiller, whose text is corrections quoted one
      after another): the first clause (up to ``.;:!?``, `` - `` or an em dash); one
      over ``words`` (10) words is cut back at its last comma or conjunction; the title
      never ends on a dangling word (``and``, ``the``) and starts with a capital. No
      ``...``: it has to read as a phrase of its own.
    """
    if clause:
        return _clause_title(text, CLAUSE_TITLE_WORDS if words is None else words)
    words = TITLE_WORDS if words is None else words
    first = re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0].rstrip(".!?")
    parts = first.replace(":", " ").split()
    title = " ".join(parts[:words])
    return title + ("..." if len(parts) > words else "")


def _clause_title(text: str, limit: int) -> str:
    clause = re.split(r"[.;:!?](?:\s|$)| - | \u2014 ", text.strip(), maxsplit=1)[0]
    words = clause.split()
    if len(words) > limit:
        words = words[:limit]
        cuts = [
            i
            for i, w in enumerate(words)
            if i >= 4 and (w.lower() in ("and", "or", "but") or words[i - 1].endswith(","))
        ]
        if cuts:
            words = words[: cuts[-1]]
    while len(words) > 3 and words[-1].lower().strip(",") in _DANGLING:
        words.pop()
    title = " ".join(words).rstrip(",")
    return title[:1].upper() + title[1:]


def resolve_citations(repo: MemoryRepo, episode_ids: Sequence[str]) -> list[str]:
    """The cited IDs that are *not* episodes committed or staged in the ledger."""
    return _locate_citations(repo, episode_ids)[1]


def _locate_citations(repo: MemoryRepo, episode_ids: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """(ID -> path of each cited episode, the IDs that are not in the ledger).

    Read from git and the files, never the index (the cache is rebuilt from them): an
    episode counts when ``<id>.yaml`` is in git's index (committed or staged, under the
    episodes folder, content staged) and its file in the working tree is a valid
    episode with that ID, where its date says; that file is what the commit records.
    An untracked file never counts.
    """
    wanted = list(dict.fromkeys(episode_ids))
    found: dict[str, str] = {}
    for ep, paths in _staged_episode_paths(repo, wanted).items():
        for path in paths:
            if _valid_in_worktree(repo, path, ep):
                found[ep] = path
                break
    return found, [ep for ep in wanted if ep not in found]


def _staged_episode_paths(repo: MemoryRepo, ids: Sequence[str]) -> dict[str, list[str]]:
    """Episode ID -> paths in git's index of files named ``<id>.yaml`` (any depth)."""
    found: dict[str, list[str]] = {ep: [] for ep in ids}
    if not found:
        return found
    folder = repo.episodes_rel
    # Default pathspec magic: '*' also matches '/', so every folder depth is searched.
    specs = [f"{folder}/*{ep}.yaml" for ep in found] if len(found) <= _MAX_ID_PATTERNS else [f"{folder}/"]
    for entry in git.ls_files_stage(repo.root, *specs):
        name = PurePosixPath(entry.path).name
        if entry.blob != _EMPTY_BLOB and name.endswith(".yaml") and name[:-5] in found:
            found[name[:-5]].append(entry.path)
    return found


def _valid_in_worktree(repo: MemoryRepo, path: str, ep_id: str) -> bool:
    try:
        raw = (repo.root / path).read_bytes()
        return parse_episode_bytes(raw, path, episodes_dir=repo.episodes_rel).id == ep_id
    except (OSError, ValidationError):
        return False


def redacted_citations(repo: MemoryRepo, episode_ids: Sequence[str]) -> list[str]:
    """The cited episodes in the ledger whose content a redaction took back."""
    found, _missing = _locate_citations(repo, episode_ids)
    return [ep for ep, path in found.items() if _is_redacted(repo, path)]


def _is_redacted(repo: MemoryRepo, path: str) -> bool:
    try:
        raw = (repo.root / path).read_bytes()
        return parse_episode_bytes(raw, path, episodes_dir=repo.episodes_rel).get("redacted") is not None
    except (OSError, ValidationError):
        return False


def _not_in_head(repo: MemoryRepo, paths: Sequence[str]) -> list[str]:
    """The ``paths`` (staged) that HEAD's tree does not hold yet."""
    if not paths:
        return []
    if git.head(repo.root) is None:
        return sorted(paths)
    committed = {e.path for e in git.ls_tree(repo.root, "HEAD", *paths)}
    return sorted(p for p in paths if p not in committed)


def load_playbook(repo: MemoryRepo) -> pb.Playbook:
    """The working tree's playbook, parsed (an empty one when the file is missing)."""
    try:
        raw = read_regular_text(repo.playbook_path)
    except FileNotFoundError:
        return pb.empty()
    except UnicodeDecodeError:
        raise ValidationError(f"{repo.playbook_rel} is not valid UTF-8") from None
    return pb.parse(raw, source=repo.playbook_rel)


def save_playbook(repo: MemoryRepo, playbook: pb.Playbook) -> None:
    """Write ``playbook`` over the file (atomically; nothing is staged): its changed rules
    spliced into the file as it is (:func:`pb.spliced`: line endings and hand spacing
    kept); a missing file, or one that does not parse, gets the canonical text."""
    try:
        text = read_regular(repo.playbook_path).decode("utf-8")
        data = pb.spliced(text, pb.parse(pb.universal_newlines(text)), playbook).encode("utf-8")
    except (FileNotFoundError, UnicodeDecodeError, ValidationError):
        data = _rendered(playbook)
    atomic_write(repo.playbook_path, data)


def _rendered(playbook: pb.Playbook) -> bytes:
    return pb.render(playbook).encode("utf-8")


def add_rule(
    repo: MemoryRepo,
    *,
    text: str,
    tags: Sequence[str],
    cites: Sequence[str],
    title: str | None = None,
    commit: bool = True,
    applies_to: Sequence[str] = (),
    check: Check | None = None,
    sentences_from: str | None = None,
) -> pb.Rule:
    """Add a hand-written rule citing ``cites``; refuse citations that do not resolve.
    ``check`` (the provenance gate, passed by the door: issue 27) judges the commit.

    ``applies_to=("images",)`` makes a visual rule (issue 19): the rule ``audit-image``
    always sends to the vision model. ``sentences_from`` (``"1: ep-a; 2: ep-b"``, issue
    25) says which citations each sentence came from; without it, every sentence is
    from the rule's citations (with one citation: from it)."""
    for name, value in (("text", text), ("title", title or "")):
        if len(value.strip()) > MAX_RULE_CHARS:
            raise UsageError(
                f"the rule's {name} is {len(value.strip()):,} characters; the limit is "
                f"{MAX_RULE_CHARS:,}: nothing was written",
                hint="say what to do and why in a few sentences; the evidence stays in the episodes cited",
            )
    sources = _sentence_sources(sentences_from)
    with write_lock(repo):
        _refuse_missing_playbook(repo)
        playbook = load_playbook(repo)
        draft = pb.make_rule(
            DRAFT_ID,
            (title or "").strip() or title_from_text(text),  # blank, as empty: not given
            text,
            tags,
            cites,
            applies_to=applies_to,
            sources=sources,
        )
        _refuse_forged_lines(draft)
        _refuse_duplicate(playbook, draft)
        rule = playbook.minted(draft)
        _refuse_secrets(repo, rule)
        found = _cited_episodes(repo, rule)
        data = _added(repo, playbook, rule)
        if not commit:
            commit_playbook(repo, data, None)
            return rule
        _commit_rule(repo, rule, data, found, check)
    return rule


def _added(repo: MemoryRepo, playbook: pb.Playbook, rule: pb.Rule) -> bytes:
    """The playbook file with ``rule`` added and every other byte as it was (its line
    endings, its spacing); a missing file is written whole, in the canonical form."""
    try:
        text = read_regular(repo.playbook_path).decode("utf-8")
    except FileNotFoundError:
        return _rendered(playbook.with_rule(rule))
    after = playbook.with_rule(rule)
    # Spliced where render puts it (no read-back parse here: the gate parses what commits).
    out = pb.render_changed(text, playbook, after)
    return (out if out is not None else pb.render(after)).encode("utf-8")


def _refuse_missing_playbook(repo: MemoryRepo) -> None:
    """A playbook deleted from the working tree while git (HEAD or the index) has it
    would be read as empty: the new rule alone would replace every rule it holds."""
    if repo.playbook_path.exists() or repo.playbook_path.is_symlink():
        return
    rel = repo.playbook_rel
    if any(git.objects_exist(repo.root, [f"HEAD:{rel}", f":{rel}"]).values()):
        raise UsageError(
            f"{rel} is missing from the working tree, while git has it; the rule would "
            "replace every rule it holds: nothing was written",
            hint=f"restore it: git restore --source=HEAD --staged --worktree -- {rel}",
        )


def _refuse_forged_lines(draft: pb.Rule) -> None:
    """A line of the text that reads as a heading or a citation of the playbook's own
    (:data:`_LOOKS_STRUCTURAL`) would show provenance the gate never checked."""
    for number, line in enumerate(draft.text.splitlines(), 1):
        if _LOOKS_STRUCTURAL.match(line):
            raise ValidationError(
                f"cannot add the rule: line {number} of its text ({line.strip()!r}) reads as the "
                "playbook's own heading or field line; nothing was written",
                hint="reword the line, or make it part of a sentence",
            )
    # Unclosed, a comment hides the rest of the file from a Markdown view: this rule's
    # own '- Learnt in:' line and every rule after it.
    if draft.text.rfind("<!--") > draft.text.rfind("-->"):
        raise ValidationError(
            "cannot add the rule: its text opens an HTML comment ('<!--') that is not closed; "
            "nothing was written",
            hint="close it ('-->') in the rule's text, or leave it out",
        )


def _refuse_duplicate(playbook: pb.Playbook, draft: pb.Rule) -> None:
    """A rule whose text an active rule already says (spacing aside) would be a second
    copy under a new ID: a retried ``rule add`` must not put a rule in recall twice."""
    words = draft.text.split()
    same = next((rule for rule in playbook.rules if rule.text.split() == words), None)
    if same is not None:
        raise ValidationError(
            f"cannot add the rule: {same.id} already says this; nothing was written",
            hint=f"see it with 'scarwarden rule show {same.id}'; to cite more episodes, "
            f"add them to its '- Learnt in:' line",
        )


def _sentence_sources(sentences_from: str | None) -> tuple[Source, ...]:
    """``--sentences-from`` parsed (none given: no sources); refused when malformed."""
    if sentences_from is None:
        return ()
    sources, problem = parse_sources(sentences_from)
    if problem:
        raise ValidationError(f"--sentences-from: {problem}", hint="write it as '1: ep-a; 2: ep-b, ep-c'")
    return sources


def _cited_episodes(repo: MemoryRepo, rule: pb.Rule) -> dict[str, str]:
    """ID -> path of each episode ``rule`` cites; refused when any is not in the ledger."""
    found, missing = _locate_citations(repo, rule.episode_ids)
    # In git's index (committed or staged), but its file is gone or broken: say so.
    broken = [paths[0] for paths in _staged_episode_paths(repo, missing).values() if paths]
    if broken:
        which = "is missing from the working tree or is not a valid episode"
        if len(broken) > 1:
            which = "are missing from the working tree or are not valid episodes"
        raise ValidationError(
            f"cannot add the rule: {', '.join(broken)} {which}; nothing was written",
            hint=f"restore it as git has it: git restore -- {' '.join(broken)}",
        )
    if missing:
        raise ValidationError(
            f"cannot add the rule: {', '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not in the ledger (committed or staged)",
            hint="no provenance, no rule: cite episodes that exist "
            "('scarwarden episode list'), or record the episode first",
        )
    return found


def _commit_rule(
    repo: MemoryRepo, rule: pb.Rule, data: bytes, found: dict[str, str], check: Check | None
) -> None:
    """Commit the playbook ``data`` holding the new ``rule``, with the episodes it cites
    that are staged but not committed yet."""
    # A cited episode that is staged but not committed goes into this commit too: a
    # commit whose rule cites an episode outside its own tree is what the gate
    # rejects and `verify` reports.
    staged_episodes = _not_in_head(repo, list(found.values()))
    commit_playbook(
        repo,
        data,
        _commit_message(rule, found, staged_episodes),
        also=staged_episodes,
        check=check,
        refuse_edits=UsageError(
            f"{repo.playbook_rel} has uncommitted changes; rule add would commit them too",
            hint="commit or discard them first, or use --no-commit",
        ),
    )


def _refuse_secrets(repo: MemoryRepo, rule: pb.Rule) -> None:
    """A rule holding a credential is refused before anything is written (the gate
    would refuse the commit too; this says so without touching the files)."""
    from scarwarden.files import secret_scan

    fields = {"title": rule.title, "text": rule.text, "tags": list(rule.tags)}
    found = secret_scan.scan_mapping(fields, repo.config.secrets.allow)
    if found:
        raise ValidationError(
            "cannot add the rule: it holds a secret; nothing was written",
            problems=[
                Problem(
                    secret_scan.describe(f), file=repo.playbook_rel, field=f.field, hint=secret_scan.hint(f)
                )
                for f in found
            ],
        )


def _commit_message(rule: pb.Rule, found: dict[str, str], staged_episodes: list[str]) -> str:
    """Subject, the citations, then the trailers: the rule, and each episode committed
    with it (one the ledger already holds is not repeated)."""
    trailers = [f"Scarwarden-Rule: {rule.id}"] + [
        f"Scarwarden-Episode: {ep}" for ep, path in found.items() if path in staged_episodes
    ]
    return (
        f"rule: add {rule.id} {rule.title}\n\n"
        f"Learnt in: {', '.join(rule.episode_ids)}\n\n" + "\n".join(trailers) + "\n"
    )
