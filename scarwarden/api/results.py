"""The typed results of the Python API (:mod:`scarwarden.api`).

Frozen records (:mod:`scarwarden.records`): every field documented, ``data`` holding the
full JSON document the CLI's ``--json`` prints for the same call, so a field added there
(recall's evidence and candidates, say) is readable before it has a typed attribute here.
"""

from __future__ import annotations

from scarwarden.records import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from scarwarden.errors import Problem


@record(frozen=True)
class RecalledRule:
    """One rule recall returned, ranked, with why it matched."""

    id: str
    title: str
    text: str
    tags: tuple[str, ...]
    #: The episodes the rule was learnt in.
    episode_ids: tuple[str, ...]
    score: float
    confidence: float
    #: The exact inline citation an answer uses: ``[PB-01, learnt in ep-a, ep-b]``.
    cite_as: str
    #: One line: the tags and terms that matched and what each contributed.
    why: str
    #: The rule's JSON in ``recall --json`` (evidence, contributions, matched words...).
    data: dict[str, Any] = field(repr=False, compare=False, default_factory=dict)


@record(frozen=True)
class Recall:
    """What recall found for a task, and the router's verdict."""

    task: str
    #: ``ACT``, ``ACT_AND_FLAG`` or ``ASK_HUMAN``.
    verdict: str
    #: What the verdict tells the agent to do, in one sentence.
    meaning: str
    rules: tuple[RecalledRule, ...]
    #: The receipt to pass to :meth:`Memory.record` unchanged: the gate proves from git
    #: which rules the agent was given. ``None`` only when recall could not make one.
    receipt: dict[str, Any] | None
    #: The commit of the playbook recalled from.
    playbook_commit: str | None
    #: ``recall --explain``'s arithmetic, when asked for (``explain=True``).
    explanation: dict[str, Any] | None = None
    #: ``recall --explain``'s arithmetic as text lines, when asked for.
    explanation_lines: tuple[str, ...] | None = None
    #: The whole ``recall --json`` document (with ``explain`` when asked for).
    data: dict[str, Any] = field(repr=False, compare=False, default_factory=dict)
    #: The recall engine's own result, for the CLI's readable form. Internal: not
    #: covered by the stability promise (docs/python.md); read the fields above.
    engine: Any = field(repr=False, compare=False, default=None)

    @property
    def candidates(self) -> list[Any] | None:
        """Recall's candidate rules beside the ranked ones, when this version of recall
        reports them (``None`` otherwise)."""
        value = self.data.get("candidates")
        return list(value) if isinstance(value, list) else None

    def to_json(self) -> dict[str, Any]:
        return dict(self.data)


@record(frozen=True)
class Recorded:
    """An episode just committed to the ledger (or staged)."""

    id: str
    #: Its file, relative to the repository's root.
    path: str
    #: The commit that holds it (``None`` if staged only).
    commit: str | None
    #: The episode as stored (fields in file order; ``recalled`` holds the receipt).
    episode: dict[str, Any]
    #: What the write warned about and recorded anyway (personal data ``privacy:`` sets
    #: to ``warn``), each naming the field and the kind, never the value.
    warnings: tuple[Problem, ...] = ()

    @property
    def rules_applied(self) -> list[str]:
        return list(self.episode.get("rules_applied") or [])

    @property
    def receipt(self) -> dict[str, Any] | None:
        value = self.episode.get("recalled")
        return dict(value) if isinstance(value, dict) else None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "path": self.path,
            "commit": self.commit,
            "episode": dict(self.episode),
            "warnings": [warning.to_json() for warning in self.warnings],
        }


def kept(warned: list[Problem], warn: Callable[[Problem], None] | None) -> Callable[[Problem], None]:
    """The ledger's ``warn`` for a write: each warning kept in ``warned`` (for the
    :class:`Recorded` it concerns) and passed on to ``warn``, if given."""

    def said(problem: Problem) -> None:
        warned.append(problem)
        if warn is not None:
            warn(problem)

    return said


def warnings_of(warned: Sequence[Problem], episode_id: str) -> tuple[Problem, ...]:
    """The warnings of ``warned`` about ``episode_id``: the ledger names the episode of
    each as ``<source> (<id>)``."""
    return tuple(w for w in warned if (w.file or "").endswith(f"({episode_id})"))


@record(frozen=True)
class Rule:
    """One rule of the playbook, with the episodes it cites."""

    id: str
    title: str
    text: str
    tags: tuple[str, ...]
    episode_ids: tuple[str, ...]
    retired: bool
    #: Why it was retired (``None`` for an active rule).
    reason: str | None
    cite_as: str
    data: dict[str, Any] = field(repr=False, compare=False, default_factory=dict)


@record(frozen=True)
class EpisodeRecord:
    """One episode of the ledger, word for word."""

    id: str
    at: str
    task: str
    #: Its file, relative to the repository's root.
    path: str | None
    #: Every field as stored (action, outcome, correction, tags, recalled...).
    fields: dict[str, Any]
    #: The rules that cite it.
    cited_by: tuple[str, ...] = ()
    #: The ledger's own episode object, for the CLI's readable form. Internal: not
    #: covered by the stability promise (docs/python.md); read the fields above.
    stored: Any = field(repr=False, compare=False, default=None)

    def get(self, key: str, default: Any = None) -> Any:
        return self.fields.get(key, default)


@record(frozen=True)
class Distillation:
    """What a distillation proposed (``dry_run``) or committed."""

    #: ``offline`` or ``model``.
    distiller: str
    dry_run: bool
    #: The ``distill:`` commit (``None`` for a dry run or when nothing was new).
    commit: str | None
    #: The playbook changes: add / update / retire, each citing its episodes.
    changes: tuple[dict[str, Any], ...]
    #: The episodes distilled.
    distilled: tuple[str, ...]
    #: Why the model was not used, when it was not (``None`` otherwise).
    notice: str | None
    #: The unified diff of the playbook.
    diff: str
    data: dict[str, Any] = field(repr=False, compare=False, default_factory=dict)
    #: The distiller's own result, for the CLI's readable form. Internal: not covered
    #: by the stability promise (docs/python.md); read the fields above.
    engine: Any = field(repr=False, compare=False, default=None)
