"""The pull-request review of memory changes: evidence, gate results, warnings.

:func:`build_review` compares the playbook at the pull request's merge base with its
head (:mod:`scarwarden.semdiff`), loads every episode the changed rules cite as of the
head, runs the provenance gate over the range (:func:`scarwarden.check.check_range`)
and raises the warnings a reviewer should weigh. :mod:`scarwarden.review_markdown`
renders it; :meth:`Review.annotations` gives GitHub's ``::error``/``::warning`` lines.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scarwarden import git
from scarwarden.audit.diff.compare import (
    PlaybookDiff,
    RuleChange,
    Side,
    diff_sides,
    episodes_at,
    last_change_base,
    load_playbook_at,
)
from scarwarden.audit.review import learning
from scarwarden.audit.review.overlap import overlap
from scarwarden.errors import Problem, ScarwardenError, UsageError
from scarwarden.files import playbook as pb
from scarwarden.files.episodes import Episode
from scarwarden.git.integrity import shallow_depth
from scarwarden.repo import MemoryRepo


@dataclass(frozen=True)
class ReviewWarning:
    level: str  # "error", "warning" or "notice" (GitHub's annotation levels)
    message: str
    rule_id: str | None = None
    file: str | None = None
    line: int | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "level": self.level,
            "message": self.message,
            "rule_id": self.rule_id,
            "file": self.file,
            "line": self.line,
        }


@dataclass
class Review:
    diff: PlaybookDiff
    #: Every episode cited (now or before) by a changed rule, as of the head.
    evidence: dict[str, Episode | None]
    warnings: list[ReviewWarning]
    #: The gate's report (``CheckReport``), or ``None`` when it could not run.
    gate: Any = None
    gate_note: str | None = None
    episodes_added: list[str] = field(default_factory=list)
    playbook_rel: str = "memory/playbook.md"
    #: Per new episode: what recall gave it (its receipt) and what it applied (issue 20).
    given: list[Any] = field(default_factory=list)

    @property
    def base(self) -> Side:
        return self.diff.old

    @property
    def head(self) -> Side:
        return self.diff.new

    @property
    def gate_ok(self) -> bool | None:
        if self.gate is None:
            return None
        return bool(self.gate.ok)

    @property
    def ok(self) -> bool:
        """False when the gate failed (the command then exits 1)."""
        return self.gate_ok is not False

    def gate_problems(self) -> list[Problem]:
        return list(self.gate.problems) if self.gate is not None else []

    def annotations(self) -> list[str]:
        """GitHub workflow commands: one ``::error``/``::warning`` line per finding."""
        lines = [_annotation("error", p.message, p.file, p.line) for p in self.gate_problems()]
        lines += [_annotation(w.level, w.message, w.file, w.line) for w in self.warnings]
        return lines

    def to_json(self) -> dict[str, object]:
        return {
            "base": self.base.to_json(),
            "head": self.head.to_json(),
            "ok": self.ok,
            "gate": None if self.gate is None else self.gate.to_json(),
            "gate_note": self.gate_note,
            "warnings": [w.to_json() for w in self.warnings],
            "episodes_added": self.episodes_added,
            "given": [g.to_json() for g in self.given],
            "diff": self.diff.to_json(),
            "evidence": {ep_id: ep.to_json() if ep else None for ep_id, ep in self.evidence.items()},
        }


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def _annotation(level: str, message: str, file: str | None, line: int | None) -> str:
    props = []
    if file:
        props.append(f"file={_escape_property(file)}")
        if line:
            props.append(f"line={line}")
    props.append("title=Scarwarden")
    return f"::{level} {','.join(props)}::{_escape_data(message)}"


# -- the range ------------------------------------------------------------------------------


def review_range(repo: MemoryRepo, base: str | None, head: str | None) -> tuple[Side, Side]:
    """``(base, head)`` sides: with ``base``, its merge base with ``head`` (what a pull
    request shows); without, the base ``scarwarden diff`` uses (the last distill)."""
    if base is not None and not base.strip():
        raise UsageError(
            "--base is empty",
            hint="give the branch or commit the change goes into; in GitHub "
            "Actions the base is known on pull_request events only",
        )
    if head is not None and not head.strip():
        raise UsageError("--head is empty", hint="give the tip of the change, or leave --head out for HEAD")
    head_rev = head or "HEAD"
    head_sha = git.rev_parse(repo.root, head_rev)
    if head_sha is None:
        raise UsageError(f"unknown revision {head_rev!r}")
    head_side = Side(head_sha, head_rev)
    if base is None:
        return last_change_base(repo, head_sha), head_side
    base_sha = git.rev_parse(repo.root, base)
    if base_sha is None:
        raise UsageError(f"unknown revision {base!r}", hint=_branches_hint(repo))
    sha = git.merge_base(repo.root, base_sha, head_sha)
    if sha is None and shallow_depth(repo.root) is not None:  # the fork point was not fetched
        raise UsageError(
            f"{base} and {head_rev} have no common commit in this shallow clone: the review "
            f"would compare with {base}'s tip and show its later changes as undone",
            hint="fetch the history (git fetch --unshallow; in CI, actions/checkout with fetch-depth: 0)",
        )
    sha = sha or base_sha
    label = base if sha == base_sha else f"merge base of {base} and {head_rev}"
    return Side(sha, label), head_side


def _branches_hint(repo: MemoryRepo) -> str:
    """The branches there are (issue 28: 'main' asked for, 'master' there), then CI's case."""
    out = git.run(repo.root, "for-each-ref", "--format=%(refname:short)", "refs/heads", "refs/remotes")
    names = [n for n in out.decode().split() if not n.endswith("/HEAD")]
    ci = "in CI, fetch the base branch (actions/checkout with fetch-depth: 0)"
    if not names:
        return ci
    return f"the branches here: {', '.join(names[:10])}{' ...' if len(names) > 10 else ''}; {ci}"


# -- warnings -------------------------------------------------------------------------------


def reviewer_warnings(
    change: RuleChange, evidence: dict[str, Episode | None], head_book: pb.Playbook, file: str
) -> list[ReviewWarning]:
    """What a reviewer should weigh about one changed rule."""
    out: list[ReviewWarning] = []
    rule = change.current
    line = change.after.line if change.after else None

    def warn(message: str, level: str = "warning") -> None:
        out.append(ReviewWarning(level, message, rule.id, file, line))

    if change.kind == "removed":
        warn(
            f"{rule.id} was deleted instead of retired: rule IDs stay on record under "
            "'## Retired' with a reason",
            "error",
        )
        return out
    if change.citations_removed:
        warn(
            f"{rule.id} lost citations: {', '.join(change.citations_removed)}; check that "
            "the episodes it still cites support the rule as written"
        )
    if rule.retired:
        if rule.replaced_by and head_book.get(rule.replaced_by) is None:
            warn(f"{rule.id} is retired in favour of {rule.replaced_by}, which is not in the playbook")
        return out
    if len(rule.episode_ids) == 1:
        warn(
            f"{rule.id} rests on a single episode ({rule.episode_ids[0]}): one experience "
            "may be an accident; look for a second before relying on it"
        )
    for ep_id in rule.episode_ids:
        ep = evidence.get(ep_id)
        if ep is None:
            warn(f"{rule.id} cites {ep_id}, which is not in the ledger at the head", "error")
        elif ep.get("redacted") is not None:
            warn(f"{rule.id} cites {ep_id}: evidence redacted ({ep.get('redacted')['reason']})")
        elif not ep.get("outcome") and not ep.get("correction"):
            warn(
                f"{rule.id} cites {ep_id}, which records no outcome and no correction: "
                "it shows what the agent did, not that the rule is right"
            )
    for message in learning.cited_contradictions(rule, evidence):
        warn(message)
    for other in head_book.rules:
        if other.id == rule.id:
            continue
        found = overlap(rule, other)
        if found:
            xj, tj = found
            warn(
                f"{rule.id} overlaps heavily with {other.id} ({other.title}): text "
                f"similarity {xj:.2f}, tag similarity {tj:.2f}; merge them or retire one"
            )
    return out


# -- building -------------------------------------------------------------------------------


def _run_gate(repo: MemoryRepo, base: Side, head: Side) -> tuple[Any, str | None]:
    try:
        from scarwarden.gate.check import check_range
    except ImportError:
        return None, "the provenance gate (scarwarden.check) is not available here"
    if base.rev is None or head.rev is None:
        return None, "the gate checks commits; the working tree is not part of the range"
    try:
        return check_range(repo.root, base.rev, head.rev), None
    except ImportError as exc:  # a partial installation
        return None, f"the provenance gate could not load ({exc})"
    except ScarwardenError as exc:
        failed = _FailedGate([Problem(exc.message, hint=exc.hint)] + exc.problems)
        return failed, None


@dataclass
class _FailedGate:
    """Stands in for a CheckReport when the gate itself raised."""

    problems: list[Problem]
    ok: bool = False

    def to_json(self) -> dict[str, object]:
        return {"ok": False, "problems": [p.to_json() for p in self.problems]}


def build_review(
    repo: MemoryRepo, base: str | None = None, head: str | None = None, *, run_gate: bool = True
) -> Review:
    """The review of the memory changes between ``base`` (merge base) and ``head``."""
    old, new = review_range(repo, base, head)
    diff = diff_sides(repo, old, new)
    head_book = load_playbook_at(repo, new)
    cited = [
        ep for c in diff.changes for ep in (c.after.episode_ids if c.after else ()) + c.citations_removed
    ]
    evidence = episodes_at(repo, new, list(dict.fromkeys(cited)))
    warnings = [w for c in diff.changes for w in reviewer_warnings(c, evidence, head_book, repo.playbook_rel)]
    gate, note = _run_gate(repo, old, new) if run_gate else (None, "not run")
    added: list[str] = []
    if old.rev is not None and new.rev is not None:
        changes = git.diff_name_status(repo.root, old.rev, new.rev, repo.episodes_rel)
        added = [c.path for c in changes if c.status == "A" and c.path.endswith(".yaml")]
        changed = [c.path for c in changes if c.status == "M" and c.path.endswith(".yaml")]
        warnings += allow_warnings(repo, old.rev, new.rev, added)
        if changed:
            seen = {c.current.id for c in diff.changes}
            warnings += redaction_warnings(repo, new, head_book, changed, seen)
    warnings += _learning_warnings(repo, old, new, head_book, diff)
    review = Review(diff, evidence, warnings, gate, note, added, repo.playbook_rel)
    if new.rev is not None and added:
        from scarwarden.audit.review.given import given_and_applied

        review.given = given_and_applied(repo, new.rev, added)
    return review


def _learning_warnings(
    repo: MemoryRepo, old: Side, new: Side, head_book: pb.Playbook, diff: PlaybookDiff
) -> list[ReviewWarning]:
    """Contradictions the distiller flagged in the range, and how each changed rule has
    fared since it last changed (:mod:`scarwarden.audit.review.learning`)."""
    file = repo.playbook_rel
    out: list[ReviewWarning] = []
    head = new.rev or "HEAD"
    flags = learning.flagged(repo, old.rev, head)
    if flags:
        eps = episodes_at(repo, new, list(dict.fromkeys(ep for _, ep in flags)))
        out += [
            ReviewWarning("warning", message, rule_id, file)
            for rule_id, message in learning.flagged_messages(repo, old.rev, head, head_book, eps)
        ]
    changed = [c.current.id for c in diff.changes if not c.current.retired]
    out += [
        ReviewWarning("warning" if struggling else "notice", line, rule_id, file)
        for rule_id, line, struggling in learning.lineage_lines(repo, changed)
    ]
    return out


def allow_warnings(repo: MemoryRepo, base: str, head: str, added: list[str]) -> list[ReviewWarning]:
    """What the range lets past the secret scanner, for a reviewer to confirm: added
    episodes carrying the inline allow marker, fingerprints added to ``secrets.allow``."""
    from scarwarden import yamlio
    from scarwarden.config import CONFIG_FILE
    from scarwarden.errors import ValidationError
    from scarwarden.files.secret_scan import ALLOW_MARKER

    out = []
    for path in added:
        raw = git.show_file(repo.root, head, path) or b""
        if ALLOW_MARKER.encode() in raw:
            out.append(
                ReviewWarning(
                    "warning",
                    f"{path} is let past the secret scanner ('{ALLOW_MARKER}'): confirm it holds no secret",
                )
            )

    def allowed(rev: str) -> set[str]:
        raw = git.show_file(repo.root, rev, CONFIG_FILE)
        try:
            data = yamlio.load(raw, source=CONFIG_FILE) if raw else None
        except ValidationError:
            return set()
        section = data.get("secrets") if isinstance(data, dict) else None
        values = section.get("allow") if isinstance(section, dict) else None
        return {str(v) for v in values} if isinstance(values, list) else set()

    new_marks = sorted(allowed(head) - allowed(base))
    if new_marks:
        out.append(
            ReviewWarning(
                "warning",
                f"{CONFIG_FILE}: secrets.allow now lets {', '.join(new_marks)} past the secret scanner: "
                "confirm each is a known false positive",
                file=CONFIG_FILE,
            )
        )
    return out


def redaction_warnings(
    repo: MemoryRepo, head: Side, book: pb.Playbook, changed: list[str], seen: set[str]
) -> list[ReviewWarning]:
    """A warning for each rule citing an episode redacted in the range (the gate has
    proved each redaction; the reviewer decides whether the rule still stands)."""
    ids = [path.rpartition("/")[2].removesuffix(".yaml") for path in changed]
    stubs = {ep_id: ep for ep_id, ep in episodes_at(repo, head, ids).items() if ep and ep.get("redacted")}
    out = []
    for rule in book.rules:
        gone = [ep for ep in rule.episode_ids if ep in stubs]
        if gone and rule.id not in seen:
            left = len(rule.episode_ids) - len(gone)
            out.append(
                ReviewWarning(
                    "warning",
                    f"{rule.id} cites {', '.join(gone)}: evidence redacted in this range"
                    + ("; no unredacted evidence is left: retire it or re-cite it" if not left else ""),
                    rule.id,
                    repo.playbook_rel,
                    rule.line or None,
                )
            )
    return out
