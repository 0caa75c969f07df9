"""One memory repository, from Python: what the CLI and the MCP server do, as calls.

Every method goes through the same code as its command (recall's engine, the ledger's
``add_episodes``, the human-answer recorder, the distiller, the index), so a Python
caller gets the same validation, the same gate and the same errors: a
:class:`~scarwarden.errors.ScarwardenError` whose ``exit_code`` is the command's. Writes
are serialised by a thread lock (one :class:`Memory` shared by threads) and by the
ledger's ``flock`` (other processes, the CLI, MCP servers); a write that raises leaves
nothing behind (the write journal undoes it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from scarwarden.api import arguments as args
from scarwarden.api.file_errors import raises_file_access_errors
from scarwarden.api.results import Distillation, EpisodeRecord, Recall, RecalledRule, Recorded, Rule
from scarwarden.errors import Problem, UsageError
from scarwarden.repo import MemoryRepo

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any

    from scarwarden.answers.asking import ConfirmHints
    from scarwarden.files.transcripts.importer import ImportResult
    from scarwarden.gate.door import Check

#: The fields :meth:`Memory.record` takes: an episode's, but ``id`` and ``at`` (minted).
RECORD_FIELDS = (
    "task",
    "action",
    "outcome",
    "correction",
    "tags",
    "refs",
    "rules_applied",
    "agent",
    "corrected_by",
    "source",
    "receipt",
    "rules_applied_reason",
)


@raises_file_access_errors
class Memory:
    """A Scarwarden memory: a git repository with ``memory/`` (``scarwarden init``)."""

    def __init__(self, repo: MemoryRepo, *, environ: Mapping[str, str] | None = None) -> None:
        args.memory(repo, environ)
        self.repo = repo
        #: Model settings' environment for :meth:`distill` (default: the process's).
        self.environ = dict(environ) if environ is not None else None
        self._writes = threading.Lock()

    @property
    def root(self) -> Path:
        return self.repo.root

    # -- recall -------------------------------------------------------------------
    def recall(
        self, task: str, *, limit: int | None = None, explain: bool = False, log: bool = True
    ) -> Recall:
        """The rules for ``task``, the router's verdict and the receipt (``recall --json``)."""
        from scarwarden.answers.cite_as import format_citation
        from scarwarden.recall.engine import recall_task

        args.text_or_none(task, "task")
        args.flags(explain=explain, log=log)
        limit = args.limit(limit)
        result = recall_task(self.repo, task, limit=limit, log=log)
        data = result.to_json()
        explanation, lines = None, None
        if explain:
            from scarwarden.recall.explain import explain_data, explain_lines

            explanation = data["explain"] = explain_data(result)
            lines = tuple(explain_lines(result))
        rules = tuple(
            RecalledRule(
                id=rule.id,
                title=rule.title,
                text=rule.text,
                tags=tuple(rule.tags),
                episode_ids=tuple(rule.episode_ids),
                score=rule.score,
                confidence=rule.confidence,
                cite_as=format_citation(rule.id, rule.episode_ids),
                why=rule.why(),
                data=raw,
            )
            for rule, raw in zip(result.rules, data["rules"], strict=True)
        )
        return Recall(
            task=result.task,
            verdict=result.verdict,
            meaning=result.meaning.strip(),
            rules=rules,
            receipt=data.get("receipt"),
            playbook_commit=result.playbook_commit,
            explanation=explanation,
            explanation_lines=lines,
            data=data,
            engine=result,
        )

    # -- writes -------------------------------------------------------------------
    def record(self, task: str, **fields: Any) -> Recorded:
        """Validate and commit one episode (``episode add``); ``receipt`` is recall's
        receipt (the dict, or its ID in this clone's recall log), stored as ``recalled:``.
        Keyword arguments: the names in :data:`RECORD_FIELDS`."""
        return self.record_fields({"task": task, **fields})

    def record_fields(self, fields: Mapping[str, Any], *, source: str = "record") -> Recorded:
        """:meth:`record` with the fields as one mapping (``None`` and empty values left out)."""
        (recorded,) = self.record_batch([self._episode_input(fields, source)], source=source)
        return recorded

    def record_batch(
        self,
        inputs: Sequence[Any],
        *,
        commit: bool = True,
        source: str = "<input>",
        redact_pii: bool = False,
        warn: Callable[[Problem], None] | None = None,
        images: Sequence[Any] = (),
        check: Check | None = None,
        allow_future: bool = False,
    ) -> list[Recorded]:
        """Episode inputs as ``episode add --file`` takes them (``recalled:`` for a
        receipt), validated together and committed as one commit (``commit=False``:
        staged); nothing is written when one is invalid. ``redact_pii`` replaces personal
        data with typed placeholders first; ``warn`` receives what ``privacy:`` warns
        about; ``images``: checked images the episodes attach. ``check``: the provenance
        gate's check on the tree about to be committed (default: the gate's own,
        :func:`scarwarden.gate.door.gate_check`; every door runs it, hooks or not); an
        ``at`` later than now is refused unless ``allow_future``."""
        from scarwarden import git
        from scarwarden.api.results import kept, warnings_of
        from scarwarden.files.record import add_episodes
        from scarwarden.gate.door import gate_check

        inputs = args.episode_inputs(inputs, warn)
        args.flags(commit=commit, redact_pii=redact_pii, allow_future=allow_future)
        args.batch_options(source, images, check)
        args.batch_at(inputs, source, allow_future)
        if check is None:
            check = gate_check(self.repo, "the episode" if len(inputs) == 1 else "the batch")

        warned: list[Problem] = []  # each episode's, in its Recorded: record() has no warn
        with self._writes:
            episodes = add_episodes(
                self.repo,
                inputs,
                commit=commit,
                source=source,
                redact_pii=redact_pii,
                warn=kept(warned, warn),
                images=images,
                check=check,
            )
            head = git.head(self.repo.root) if commit else None
        return [
            Recorded(
                ep.id, ep.relpath(self.repo.episodes_rel), head, ep.to_json(), warnings_of(warned, ep.id)
            )
            for ep in episodes
        ]

    def answer(
        self,
        task: str,
        answer: str,
        *,
        receipt: Any = None,
        refs: Sequence[str] | None = None,
        commit: bool = True,
    ) -> Recorded:
        """Record a human's answer to an ASK_HUMAN task, word for word, as a new episode
        (``scarwarden answer``); it refers to the episodes of any rules recall returned.
        ``refs``: those episode IDs when the caller has recalled already (``ask``; ``[]``
        for none), ``None`` to recall ``task`` here. ``commit=False`` stages it. What
        ``privacy:`` warns about is recorded, and listed in the result's ``warnings``."""
        from scarwarden.answers.asking import record_human_answer
        from scarwarden.recall.engine import check_task

        task, answer = check_task(args.required(task, "task")), args.required(answer, "answer")
        args.flags(commit=commit)
        refs = args.id_list(refs, "refs")
        warned: list[Problem] = []
        with self._writes:
            ep = record_human_answer(
                self.repo, task, answer, receipt=receipt, refs=refs, commit=commit, warn=warned.append
            )
            return self._recorded(ep, committed=commit, warnings=warned)

    def confirm(
        self, task: str, rule_id: str, *, commit: bool = True, hints: ConfirmHints | None = None
    ) -> tuple[Recorded, str]:
        """Record a human's confirmation that a rule (a candidate of an ``ASK_HUMAN``)
        applies to the task (``ask --confirm``): an episode whose correction is the rule's
        own text, so the task's words reach the rule; returns it and the rule's canonical
        ID. An unknown, retired or misspelt ID, or a rule recall does not show for the task
        (returned or a candidate), raises :class:`UsageError`, nothing written.
        ``commit=False`` stages the episode instead of committing it. ``hints``: what a
        refusal tells the human to do, in your door's words
        (:class:`scarwarden.answers.asking.ConfirmHints`; by default the CLI's)."""
        from scarwarden.answers.asking import CLI_HINTS, record_confirmation

        task, rule_id = args.required(task, "task"), args.required(rule_id, "rule_id")
        args.flags(commit=commit)
        args.hints(hints)
        warned: list[Problem] = []
        with self._writes:
            ep, confirmed = record_confirmation(
                self.repo, task, rule_id, commit=commit, hints=hints or CLI_HINTS, warn=warned.append
            )
            return self._recorded(ep, committed=commit, warnings=warned), confirmed

    def distill(
        self,
        *,
        offline: bool | None = None,
        dry_run: bool = True,
        branch: str | None = None,
        commit: bool = True,
        progress: Callable[[int, int], None] | None = None,
    ) -> Distillation:
        """Playbook changes from the episodes no rule cites yet. ``dry_run`` (the default)
        writes nothing: by the model when one is configured and answers, else offline
        with ``notice`` saying why. ``offline``: ``True`` forces the offline distiller,
        ``False`` requires the model (:class:`~scarwarden.errors.NoModelConfigured`).
        ``commit=False`` writes the playbook in the working tree and commits nothing
        (``distill --no-commit``); ``progress(done, total)`` is called as the model's
        batches are answered."""
        from scarwarden.distill import distill, preview

        args.distill(branch, progress, offline=offline, dry_run=dry_run, commit=commit)
        with self._writes:
            if dry_run:
                result = preview(
                    self.repo,
                    offline=offline,
                    branch=branch,
                    commit=commit,
                    environ=self.environ,
                    progress=progress,
                )
            else:
                result = distill(
                    self.repo,
                    offline=offline,
                    dry_run=False,
                    branch=branch,
                    commit=commit,
                    environ=self.environ,
                    progress=progress,
                )
        data = result.to_json()
        return Distillation(
            distiller=result.distiller,
            dry_run=dry_run,
            commit=result.commit,
            changes=tuple(data["changes"]),
            distilled=tuple(result.distilled),
            notice=result.notice,
            diff=data["diff"],
            data=data,
            engine=result,
        )

    def import_runs(
        self,
        source: str | Path | IO[bytes],
        format: str,  # noqa: A002 - the CLI's --format
        *,
        name: str | None = None,
        corrections: Mapping[int, str] | None = None,
        write_tools: Iterable[str] = (),
        agent: str | None = None,
        at: str | None = None,
        allow_future: bool = False,
        dry_run: bool = False,
        progress: Callable[[int], None] | None = None,
        warn: Callable[[Problem], None] | None = None,
    ) -> ImportResult:
        """Recorded runs as episodes, one per conversation, in one commit (``episode
        import``). ``format``: ``openai-chat`` or ``tau-bench``; ``source``: a path or a
        binary stream (``name`` is what errors call it); ``corrections``: conversation
        number (from 1) -> what a human corrected; ``agent`` defaults, for tau-bench, to
        the file's name; ``at`` later than now is refused unless ``allow_future``
        (``--allow-future``). Importing the same runs again adds nothing."""
        from scarwarden.files.transcripts.importer import Options, import_file
        from scarwarden.gate.door import gate_check

        source = args.source(source)
        write_tools = args.import_options(name, corrections, write_tools, agent, at, progress, warn)
        args.flags(allow_future=allow_future, dry_run=dry_run)
        args.not_future(at, allow_future)  # before the file is read: nothing to undo
        name = name or (source.name if isinstance(source, Path) else "<stream>")
        if agent is None and format == "tau-bench" and not name.startswith("<"):
            agent = Path(name).stem
        options = Options(dict(corrections or {}), tuple(write_tools), agent, at)
        with args.opened(source) as stream, self._writes:
            return import_file(
                self.repo,
                stream,
                format,
                source=name,
                options=options,
                dry_run=dry_run,
                progress=progress,
                warn=warn,
                check=gate_check(self.repo, "the import"),
            )

    # -- reads --------------------------------------------------------------------
    def rule(self, rule_id: str) -> Rule:
        """One rule (active or retired) by its ID; :class:`UsageError` when there is none."""
        from scarwarden.answers.cite_as import format_citation
        from scarwarden.files.rule_ids import canonical
        from scarwarden.index import open_index

        rule_id = canonical(args.an_id(rule_id, "rule_id"))
        with open_index(self.repo) as index:
            index.require_playbook()
            rule = index.get_rule(rule_id)
        if rule is None:
            raise UsageError(f"no rule {rule_id} in the playbook", hint="'scarwarden rule list' shows them")
        return Rule(
            id=rule.id,
            title=rule.title,
            text=rule.text,
            tags=tuple(rule.tags),
            episode_ids=tuple(rule.episode_ids),
            retired=bool(rule.retired),
            reason=rule.reason if rule.retired else None,
            cite_as=format_citation(rule.id, rule.episode_ids),
            data=dict(rule.to_json()),
        )

    def episode(self, episode_id: str, *, missing_hint: str | None = None) -> EpisodeRecord:
        """One episode by its ID, word for word; :class:`UsageError` when there is none
        (``missing_hint``: what that error suggests, for a door with its own commands)."""
        from scarwarden.index import open_index

        episode_id = args.an_id(episode_id, "episode_id").lower()
        args.text_or_none(missing_hint, "missing_hint")
        with open_index(self.repo) as index:
            ep = index.get_episode(episode_id)
            if ep is None:
                raise UsageError(
                    f"no episode {episode_id} in the ledger",
                    hint=missing_hint
                    or "episode IDs look like ep-7k2m9q4x1z; 'scarwarden episode list' shows what there is",
                )
            path = index.episode_path(episode_id)
            citing = tuple(index.rules_citing(episode_id))
        data = ep.to_json()
        return EpisodeRecord(ep.id, str(data["at"]), ep.task, path, data, citing, stored=ep)

    # -- helpers ------------------------------------------------------------------
    def _episode_input(self, fields: Mapping[str, Any], source: str) -> dict[str, Any]:
        # Refused, never dropped: a caller that sends `id` or `at` must not believe they
        # were kept (issue 16). The ledger mints both.
        unknown = [key for key in args.fields(fields) if key not in RECORD_FIELDS]
        if unknown:
            raise UsageError(
                f"{source} does not take {', '.join(repr(k) for k in unknown)}",
                hint="the ledger mints the episode's id and time (at); the fields are: "
                + ", ".join(RECORD_FIELDS),
            )
        data = {key: args.as_list(key, value) for key, value in fields.items() if not args.empty(value)}
        if "receipt" in data:
            from scarwarden.recall.receipts import resolve

            data["recalled"] = resolve(self.repo, data.pop("receipt"), source="receipt")
        return data

    def _recorded(self, ep: Any, *, committed: bool = True, warnings: Sequence[Problem] = ()) -> Recorded:
        from scarwarden import git

        rel = ep.relpath(self.repo.episodes_rel)
        entries = git.log(self.repo.root, "-1", "--", rel) if committed else []
        return Recorded(ep.id, rel, entries[0].sha if entries else None, ep.to_json(), tuple(warnings))


def open_memory(path: str | Path = ".") -> Memory:
    """The memory of the git repository at (or above) ``path``. Raises
    :class:`~scarwarden.errors.UsageError` (exit 2) when it is not one, or has no
    ``memory/`` yet (``scarwarden init``), and :class:`~scarwarden.errors.ConfigError`
    for a bad ``scarwarden.yaml``."""
    from scarwarden.repo import open_repo

    return Memory(open_repo(args.folder(path, "path")))
