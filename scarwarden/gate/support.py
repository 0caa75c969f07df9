"""The support check (issue 25): does each sentence share words with its episodes?

Every sentence of an active rule names the episodes it came from (``- Sentences
from:``; a sentence the map leaves out is from all the rule's citations). A sentence
that shares no *content word* with them (Snowball stems, stopwords, generic words,
numbers and identifiers left out: :func:`content`) states something those episodes
never said:

* an **error** for a mapped sentence (the offline distiller's, ``rule add``'s): its
  words are quoted from its episodes, so none in common is a provenance break;
* a **warning** for a model's sentence (``(model)``: a model may generalise) and for a
  sentence without a map (older playbooks, hand-written rules).

A map naming an episode the rule does not cite never parses (the playbook parser
refuses it with the sentence and a fix), so it cannot reach this check.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scarwarden import git
from scarwarden import text as txt
from scarwarden.errors import ValidationError
from scarwarden.files import claims
from scarwarden.files import playbook as pb
from scarwarden.files.episodes import Episode, parse_episode_bytes
from scarwarden.gate.report import CheckReport
from scarwarden.repo import MemoryRepo

if TYPE_CHECKING:
    from scarwarden.gate.policy import GateProblem

#: The fields of an episode whose words can support a sentence.
FIELDS = ("task", "action", "outcome", "correction")


def content(text: str) -> frozenset[str]:
    """Content stems of ``text``: no stopwords, generic words, numbers or identifiers."""
    return frozenset(
        s for s in txt.stems(claims.without_identifiers(text)) if s not in claims.GENERIC and not s.isdigit()
    )


def episode_words(ep: Episode) -> frozenset[str]:
    parts = [str(ep.get(name) or "") for name in FIELDS] + [" ".join(ep.tags)]
    return content(" ".join(parts))


@dataclass(frozen=True)
class Unsupported:
    rule: str
    number: int
    sentence: str
    episode_ids: tuple[str, ...]
    severity: str  # "error" | "warning"
    kind: str  # "stated" | "model" | "rule"
    line: int = 0

    def message(self) -> str:
        whose = ", ".join(self.episode_ids)
        what = {"stated": "", "model": " (written by a model)", "rule": " (no sentence map)"}[self.kind]
        return (
            f"{self.rule}: sentence {self.number}{what} shares no word with {whose}, "
            f"the episodes it names: {self.sentence!r}"
        )

    def hint(self) -> str:
        return (
            "no provenance, no sentence: name in '- Sentences from:' the episode that taught it "
            "(and cite it in '- Learnt in:'), or reword the sentence in that episode's words"
        )

    def to_json(self) -> dict[str, object]:
        return {
            "rule": self.rule,
            "sentence": self.number,
            "text": self.sentence,
            "episode_ids": list(self.episode_ids),
            "severity": self.severity,
            "kind": self.kind,
        }


def unsupported(
    book: pb.Playbook, episodes: Mapping[str, Episode], rules: Iterable[pb.Rule] | None = None
) -> list[Unsupported]:
    """The sentences of ``rules`` (default: every active rule) that share no content word
    with the episodes they name. Episodes not in ``episodes`` are skipped (the citation
    check reports a missing one); a sentence without content words is not checked, nor
    one naming a redacted episode, whose words are gone: a redaction must never be
    refused for the rules it leaves (the ``evidence-redacted`` warning names them)."""
    cache: dict[str, frozenset[str]] = {}
    out: list[Unsupported] = []
    for rule in book.rules if rules is None else rules:
        if rule.retired:
            continue
        for said in rule.said():
            known = [ep for ep in said.episode_ids if ep in episodes]
            words = content(said.sentence)
            if not known or not words or any(episodes[ep].get("redacted") is not None for ep in known):
                continue
            for ep in known:
                if ep not in cache:
                    cache[ep] = episode_words(episodes[ep])
            if any(words & cache[ep] for ep in known):
                continue
            severity = "error" if said.kind == "stated" else "warning"
            out.append(
                Unsupported(rule.id, said.number, said.sentence, tuple(known), severity, said.kind, rule.line)
            )
    return out


def supporting_words(sentence: str, episodes: Iterable[Episode]) -> list[tuple[str, list[str]]]:
    """For a reviewer: each episode's words that the sentence shares (surface forms)."""
    wanted = content(sentence)
    out: list[tuple[str, list[str]]] = []
    for ep in episodes:
        shared: dict[str, str] = {}
        for name in FIELDS:
            for token in txt.tokens(claims.without_identifiers(str(ep.get(name) or ""))):
                stem = txt.stem(token)
                if stem in wanted and stem not in shared:
                    shared[stem] = token
        out.append((ep.id, list(shared.values())))
    return out


# -- the gate: check (hook, --all, --from-ref) and verify -------------------------------


def changed_rules(old: pb.Playbook | None, new: pb.Playbook) -> list[pb.Rule]:
    """Active rules whose text, sentence map or citations differ from ``old``'s."""
    before = {r.id: (r.text, r.sources, r.episode_ids) for r in old.rules} if old else {}
    return [r for r in new.rules if before.get(r.id) != (r.text, r.sources, r.episode_ids)]


def _book(raw: bytes | None, source: str) -> pb.Playbook | None:
    if raw is None:
        return None
    try:
        return pb.parse(raw.decode("utf-8", "replace"), source=source)
    except ValidationError:
        return None  # the parse problems are the playbook check's to report


def gate_problems(found: Iterable[Unsupported], source: str) -> tuple[list[GateProblem], list[GateProblem]]:
    """(errors, warnings) as the gate reports them."""
    from scarwarden.gate.policy import problem

    errors: list[GateProblem] = []
    warnings: list[GateProblem] = []
    for item in found:
        made = problem(
            "sentence-unsupported",
            item.message(),
            file=source,
            line=item.line or None,
            field="Sentences from",
            hint=item.hint(),
            rule=item.rule,
        )
        (errors if item.severity == "error" else warnings).append(made)
    return errors, warnings


def _episodes(
    repo: MemoryRepo, specs: dict[str, str], env: Mapping[str, str] | None, missing: list[str] | None = None
) -> dict[str, Episode]:
    """Episode ID -> the episode, read from ``rev:path`` (or ``:path``, the index) specs;
    the IDs whose object could not be read are appended to ``missing``."""
    ids = sorted(specs)
    out: dict[str, Episode] = {}
    for ep_id, raw in zip(ids, git.cat_file_batch(repo.root, [specs[i] for i in ids], env=env), strict=True):
        if raw is None:
            if missing is not None:
                missing.append(ep_id)
            continue
        try:
            out[ep_id] = parse_episode_bytes(raw)
        except ValidationError:
            continue  # an invalid episode is the episode check's to report
    return out


def _merge(report: CheckReport, found: list[Unsupported], source: str) -> None:
    errors, warnings = gate_problems(found, source)
    report.problems.extend(errors)
    report.warnings.extend(warnings)
    report.count("sentences_checked", len(found))


def check_staged_support(report: CheckReport, repo: MemoryRepo, env: Mapping[str, str] | None) -> None:
    """The pre-commit hook: the sentences of every rule the commit adds or changes,
    against the staged episodes they name."""
    from scarwarden.gate.resolve import find_episode_paths

    rel = repo.playbook_rel
    new_raw, old_raw = git.cat_file_batch(repo.root, [f":{rel}", f"HEAD:{rel}"], env=env)
    new = _book(new_raw, rel)
    if new is None:
        return
    rules = changed_rules(_book(old_raw, rel), new)
    ids = {ep for rule in rules for ep in rule.episode_ids}
    if not ids:
        return
    paths = find_episode_paths(repo.root, repo.episodes_rel, ids, env)
    specs = {ep: f":{found[0]}" for ep, found in paths.items() if found}
    _merge(report, unsupported(new, _episodes(repo, specs, env), rules), rel)


def check_tree_support(
    report: CheckReport,
    repo: MemoryRepo,
    rev: str | None,
    env: Mapping[str, str] | None = None,
    *,
    base: str | None = None,
) -> None:
    """``check --all`` (``rev`` None: the index) and the end of a range or history
    (``check --from-ref``, ``verify``): every active rule's sentences at that tree.
    ``base``: the range's start, whose cited episodes' places may be known already."""
    from scarwarden.gate.policy import episode_id_of

    rel = repo.playbook_rel
    prefix = "" if rev is None else rev
    (raw,) = git.cat_file_batch(repo.root, [f"{prefix}:{rel}"], env=env)
    book = _book(raw, rel)
    if book is None or not book.rules:
        return
    cited = {ep for rule in book.rules for ep in rule.episode_ids}
    specs = None if rev is None else _cited_blobs(repo, rev, base, cited, env)
    if specs is None:
        entries = (
            git.ls_files_stage(repo.root, repo.episodes_rel, env=env)
            if rev is None
            else git.ls_tree(repo.root, rev, repo.episodes_rel)
        )
        specs = {}
        for entry in entries:
            ep = episode_id_of(entry.path)
            if ep in cited and ep not in specs:
                specs[ep] = entry.blob
    _merge(report, _unsupported_at(repo, book, raw or b"", specs, env), rel)


def _unsupported_at(
    repo: MemoryRepo, book: pb.Playbook, raw: bytes, specs: dict[str, str], env: Mapping[str, str] | None
) -> list[Unsupported]:
    """:func:`unsupported` for every rule, kept by the playbook's bytes and the cited
    blobs (:mod:`scarwarden.gate.support_memo`: a move that changes neither pays none)."""
    from scarwarden.gate import support_memo
    from scarwarden.gate.ledger_files import cache_dir

    def compute() -> tuple[list[support_memo.Row], bool]:
        missing: list[str] = []
        found = unsupported(book, _episodes(repo, specs, env, missing))
        rows = [
            [u.rule, u.number, u.sentence, list(u.episode_ids), u.severity, u.kind, u.line] for u in found
        ]
        return rows, not missing

    rows = support_memo.memoised(cache_dir(repo.root), raw, specs, compute)
    return [Unsupported(r[0], r[1], r[2], tuple(r[3]), r[4], r[5], r[6]) for r in rows]


def _cited_blobs(
    repo: MemoryRepo, rev: str, base: str | None, cited: set[str], env: Mapping[str, str] | None
) -> dict[str, str] | None:
    """The blob of each cited episode at ``rev``, carried over from ``base`` by a diff or
    found by the ledger statistics of its episodes folder (which month holds each ID:
    issue 30) when they cost what changed (:meth:`LedgerReader.places`); ``None`` when
    they do not (the tree is listed instead: at 1M episodes, ~10 s). Both find the first valid episode
    of each ID in path order, as the index does; a misplaced file (the walk refuses
    one) is found only by the listing."""
    from scarwarden.gate.ledger import LedgerReader, cache_dir

    where = cache_dir(repo.root)
    if where is None:
        return None
    specs = [f"{r}:{repo.episodes_rel}" for r in (rev, base) if r]
    trees = git.tree_ids(repo.root, specs, env=env)
    tree = trees.get(specs[0])
    if tree is None:
        return None
    old = trees.get(specs[1]) if len(specs) > 1 else None
    reader = LedgerReader(repo.root, repo.episodes_rel, env=env, cache_dir=where)
    places = reader.places(tree, cited, old)
    if places is None:
        return None
    return {ep: place[1] for ep, place in places.items() if place is not None}
