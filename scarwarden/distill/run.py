"""One distillation, end to end: :func:`distill` (its result: :mod:`.result`).

Checks first (nothing is asked of a model that cannot be committed), then the playbook
to build on, the episodes not distilled yet, the distiller and the gate in code, the
message, and last the commit, under the write lock.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from scarwarden import git
from scarwarden.distill import commit as commits
from scarwarden.distill import earned, state
from scarwarden.distill.ops import apply_operations
from scarwarden.distill.result import DistillResult
from scarwarden.errors import (
    ModelError,
    ModelUnreachable,
    NoModelConfigured,
    UsageError,
    ValidationError,
    file_access_error,
)
from scarwarden.files import playbook as pb
from scarwarden.files import write_journal
from scarwarden.files.atomic import write_lock
from scarwarden.files.episodes import Episode
from scarwarden.llm.client import ChatClient, client_from_config
from scarwarden.regular_files import read_regular, refuse_special
from scarwarden.repo import MemoryRepo

NO_KEY_NOTICE = (
    "no API key configured (DASHSCOPE_API_KEY; SCARWARDEN_API_KEY once a provider or base URL is set): "
    "using the offline distiller"
)


def _choose(
    repo: MemoryRepo, offline: bool | None, client: ChatClient | None, environ: Mapping[str, str] | None
) -> tuple[ChatClient | None, str | None]:
    """The client to use (``None``: offline) and the one-line notice to show, if any."""
    if offline:
        return None, None
    if client is None:
        client = client_from_config(repo.config, environ)
    if client is None:
        # The provider's own key variable (OPENAI_API_KEY for the openai preset), not
        # always DashScope's (issue 18).
        var = repo.config.key_env() or "DASHSCOPE_API_KEY"
        if offline is False:
            raise NoModelConfigured(
                "distilling with a model needs an API key, and none is configured",
                hint=f"set {repo.config.key_names()}, or use --offline",
            )
        stray = repo.config.stray_key(environ)  # SCARWARDEN_API_KEY alone is sent nowhere
        if stray is not None:
            return None, f"{stray}; using the offline distiller"
        if repo.config.endpoint_set:
            return None, f"no API key configured (SCARWARDEN_API_KEY or {var}): using the offline distiller"
        return None, NO_KEY_NOTICE.replace("DASHSCOPE_API_KEY", var)
    return client, None


def distill(
    repo: MemoryRepo,
    *,
    offline: bool | None = None,
    dry_run: bool = False,
    branch: str | None = None,
    commit: bool = True,
    client: ChatClient | None = None,
    environ: Mapping[str, str] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> DistillResult:
    """Distil the episodes not yet distilled into playbook changes.

    ``offline``: ``None`` picks the model when a key is configured (else the offline
    distiller, with a notice); ``True`` forces offline; ``False`` requires a model.
    ``dry_run`` changes nothing. ``branch`` commits on a new branch without touching
    the current one. ``commit=False`` leaves the new playbook in the working tree.
    ``progress(done, total)`` follows the model's batches (episodes answered).
    """
    head = _preflight(repo, branch=branch, commit=commit, dry_run=dry_run)
    chosen, notice = _choose(repo, offline, client, environ)
    before = _starting_playbook(repo, head, commit=commit)
    base = pb.parse(pb.universal_newlines(before), source=repo.playbook_rel)
    ledger = state.ledger_at(repo, head)
    commits.refuse_unresolved(repo, base, before, ledger, head)
    by_commits = state.distilled_by_commits(repo, head)
    if not commit and not dry_run:  # its message would replace the earlier run's
        commits.refuse_uncommitted_run(repo, head, before, by_commits)
    done = by_commits | base.cited_episode_ids()
    new_ids = sorted(ep for ep in ledger if ep not in done)
    episodes, left = state.load_episodes(repo, ledger, new_ids)

    result = DistillResult(
        distiller="offline" if chosen is None else "model",
        model=None if chosen is None else chosen.settings.distill_model,
        head=head,
        new=new_ids,
        distilled=[],
        left=left,
        changes=[],
        drops=[],
        before=before,
        after=before,
        notice=notice,
        branch=branch,
        dry_run=dry_run,
        playbook_rel=repo.playbook_rel,
    )
    if not episodes:
        return result
    result.struggling = earned.struggling_rules(repo, base)
    _propose(repo, chosen, episodes, base, ledger, result, progress)
    if result.nothing_new:
        return result
    result.message = _message(result, "offline" if chosen is None else f"model {result.model}")
    if not dry_run:
        _land(repo, result, head, branch=branch, commit=commit)
    return result


def _message(result: DistillResult, distiller: str) -> str:
    """The ``distill:`` commit's message: what changed, what was dropped and left, and
    the rules that struggle."""
    return commits.message(
        commits.MessageParts(
            distiller,
            result.changes,
            result.drops,
            result.distilled,
            result.left,
            result.usage,
            result.calls,
            result.contradictions,
            result.no_lesson,
            [earned.describe(lineage) for lineage in result.struggling],
            result.accounts,
            [flag.describe() for flag in result.review],
        )
    )


def preview(
    repo: MemoryRepo,
    *,
    offline: bool | None = None,
    branch: str | None = None,
    commit: bool = True,
    client: ChatClient | None = None,
    environ: Mapping[str, str] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> DistillResult:
    """What :func:`distill` would do, writing nothing (``--dry-run``, the web UI's
    preview): by the configured model when it can be used, else by the offline
    distiller, with ``notice`` saying why (issue 18). ``offline=False`` (a model is
    required) falls back on nothing: its errors are raised."""
    try:
        return distill(
            repo,
            offline=offline,
            dry_run=True,
            branch=branch,
            commit=commit,
            client=client,
            environ=environ,
            progress=progress,
        )
    except (ModelUnreachable, ModelError) as exc:
        if offline is False:
            raise
        result = distill(repo, offline=True, dry_run=True, branch=branch, commit=commit)
        result.notice = (
            f"the model could not be used ({exc.message}); this preview is the offline "
            "distiller's (a real run would stop with this error instead)"
        )
        return result


def commit_preview(repo: MemoryRepo, result: DistillResult) -> DistillResult:
    """Commit exactly what the dry run ``result`` previewed, on the current branch: the
    model is not asked again, so what a reviewer approved is what lands. Refused when
    HEAD moved since the preview; no commit when it had nothing to record."""
    if result.message is None:
        return result
    commits.require_clean_playbook(repo)
    _land(repo, result, result.head, branch=None, commit=True)
    result.dry_run = False
    return result


def _preflight(repo: MemoryRepo, *, branch: str | None, commit: bool, dry_run: bool) -> str:
    """Refuse what cannot work before any model call; return HEAD."""
    try:
        # A FIFO or socket playbook is refused as every command refuses it, whatever the
        # mode: the index (the struggling rules) reads it, and a commit would replace it.
        refuse_special(repo.playbook_path)
    except OSError as exc:
        raise file_access_error(exc, root=str(repo.root)) or exc from None
    write_journal.recover_interrupted(repo)  # a killed write's playbook is not an edit
    if branch is not None and not commit:
        raise UsageError(
            "--branch and --no-commit cannot be combined",
            hint="--branch commits on a new branch; --no-commit commits nothing",
        )
    head = git.head(repo.root)
    if head is None:
        raise UsageError(
            "the repository has no commits yet", hint="commit the memory first ('scarwarden init' does)"
        )
    if branch is not None:
        commits.check_branch_name(repo, branch)
    elif commit and not dry_run:
        commits.require_clean_playbook(repo)
    return head


def _starting_playbook(repo: MemoryRepo, head: str, *, commit: bool) -> str:
    """The playbook text to build on: HEAD's when committing (that is what the commit
    will change), else the working tree's."""
    if commit:
        _refuse_not_a_file(repo, head)
        raw = git.show_file(repo.root, head, repo.playbook_rel)
        where = f"{repo.playbook_rel} (committed)"
    else:
        raw = read_regular(repo.playbook_path) if repo.playbook_path.exists() else None
        where = repo.playbook_rel
    if raw is None:
        return pb.TITLE + "\n"
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValidationError(
            f"{where} is not valid UTF-8 (the byte 0x{raw[exc.start]:02X} at byte {exc.start + 1:,}); "
            "nothing was distilled",
            hint="save the playbook as UTF-8 ('scarwarden check' shows the line), then distill again",
        ) from None


def _refuse_not_a_file(repo: MemoryRepo, head: str) -> None:
    """A committed playbook that is a symlink, a submodule or a folder: its blob is no
    playbook text (a link's target path), so say what it is instead of parsing it."""
    from scarwarden.gate.policy import playbook_mode_problem

    entries = git.ls_tree(repo.root, head, repo.playbook_rel)
    mode = next((e.mode for e in entries if e.path == repo.playbook_rel), "040000" if entries else None)
    bad = playbook_mode_problem(repo.playbook_rel, mode) if mode else None
    if bad is not None:
        raise ValidationError(
            f"{repo.playbook_rel} in HEAD is not a plain file; nothing was distilled",
            problems=[bad],
            hint="commit the playbook as a plain file, then distill again",
        )


def _propose(
    repo: MemoryRepo,
    chosen: ChatClient | None,
    episodes: list[Episode],
    base: pb.Playbook,
    ledger: state.Ledger,
    result: DistillResult,
    progress: Callable[[int, int], None] | None = None,
) -> None:
    """Run the distiller and the gate in code; record the changes in ``result``."""
    if chosen is None:
        from scarwarden.distill.offline import offline_operations

        def load(ids: list[str]) -> list[Episode]:
            return state.load_episodes(repo, ledger, [i for i in ids if i in ledger])[0]

        plan = offline_operations(episodes, base, load)
        gate = apply_operations(base, plan.operations, ledger)
        after, used = gate.playbook, plan.used
        result.changes, result.drops = gate.changes, gate.drops
        result.left += plan.left
        result.contradictions, result.no_lesson = plan.flags, plan.no_lesson
    else:
        from scarwarden.distill.injection import review
        from scarwarden.distill.model import model_distill

        revise = {
            lineage.rule_id: state.load_episodes(
                repo, ledger, [e for e in lineage.corrections if e in ledger]
            )[0]
            for lineage in result.struggling
        }
        run = model_distill(
            chosen,
            chosen.settings.distill_model,
            episodes,
            base,
            ledger,
            repo.config.distill,
            revise,
            progress=progress,
        )
        after, used = run.playbook, run.used
        result.changes, result.drops = run.changes, run.drops
        shown = [*episodes, *(ep for eps in revise.values() for ep in eps)]
        result.review = review(base, after, run.changes, shown)  # for the reviewer, not a gate
        result.usage, result.calls, result.batches = run.usage, run.calls, run.batches
        result.left += run.left
    from scarwarden.distill.redacted import retirements

    retire = retirements(repo, after, ledger)
    if retire:  # rules whose every citation was redacted (scarwarden redact)
        extra = apply_operations(after, retire, ledger)
        after = extra.playbook
        result.changes, result.drops = [*result.changes, *extra.changes], [*result.drops, *extra.drops]
    used_set = set(used)
    result.distilled = [ep for ep in result.new if ep in used_set]
    result.accounts = _accounts(episodes, base, after, result)
    if result.changes:
        result.after = pb.spliced(result.before, base, after, source=repo.playbook_rel)


def _accounts(
    episodes: list[Episode], base: pb.Playbook, after: pb.Playbook, result: DistillResult
) -> list[tuple[str, str]]:
    """Every new episode with a correction: the active rules citing it, or why none
    does; and every episode a superseded rule cited that no active rule cites now."""
    citing: dict[str, list[str]] = {}
    for rule in after.rules:
        for ep in rule.episode_ids:
            citing.setdefault(ep, []).append(rule.id)
    why = dict(result.no_lesson) | dict(result.left)
    for flag in result.contradictions:
        if flag.decided:
            why.setdefault(flag.episode_id, f"its lesson contradicted {flag.rule}")
    superseded = {ep for c in result.changes if c.kind == "supersede" for ep in c.episode_ids}
    out: list[tuple[str, str]] = []
    for episode in episodes:
        if episode.get("correction") is None:
            continue
        ep = episode.id
        if ep in citing:
            out.append((ep, f"cited by {', '.join(citing[ep])}"))
        elif ep in why:
            out.append((ep, f"left out: {why[ep]}"))
        elif ep in superseded:
            out.append((ep, "left out: cited by a retired rule it superseded"))
        else:
            out.append((ep, "left out: no operation citing it passed the provenance gate"))
    for change in result.changes:
        old = base.get(change.rule_id) if change.kind in ("supersede", "retire") else None
        if old is None:
            continue
        for ep in old.episode_ids:
            if ep not in citing:
                out.append((ep, f"left out: it taught the wording {old.id} had before it was retired"))
    return out


def _land(repo: MemoryRepo, result: DistillResult, head: str, *, branch: str | None, commit: bool) -> None:
    """Commit (here or on a new branch) or write the result, under the write lock."""
    data = result.after.encode("utf-8")
    assert result.message is not None
    with write_lock(repo):
        if git.head(repo.root) != head:
            raise UsageError(
                "HEAD moved while distilling; nothing was written", hint="run 'scarwarden distill' again"
            )
        if branch is not None:
            result.commit = commits.commit_on_branch(repo, branch, head, data, result.message)
        elif commit:
            result.commit = commits.commit_here(repo, data, result.message)
        else:  # no rule changed: the message alone records the episodes the model saw
            result.message_file = commits.write_only(repo, data if result.changes else None, result.message)
