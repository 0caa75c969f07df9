"""What is waiting for a human: the recall log, and the episodes not yet distilled with a
dry-run preview of ``distill`` and a button that commits it (issue 18).

The commit is the UI's second write, with the same protections as the human-answer
form (:mod:`.app`): POST only, the per-process CSRF token, an ``Origin``/``Referer``
of this server, the ``Host`` check before every request, refused with ``--read-only``.
It also carries the commit the preview was made at: if memory changed since, nothing is
committed and the page says to look again. The preview uses the configured model when
it can be used, else the offline distiller, and says which. What the preview showed is
what gets committed: the offline distiller is deterministic and runs again; a model's
preview is held by the server (by an ID in the form) and committed as shown, never
asked again, and one preview per commit is all a page view costs. The form always
names its preview (``offline``, or the held model preview's ID): a POST naming none
commits nothing (issue 27: it committed the offline result under a model's preview).
"""

from __future__ import annotations

import re
import secrets
import threading
from typing import TYPE_CHECKING, Any

from flask import Flask, Response, redirect, request

from scarwarden.errors import GitError, ScarwardenError, UsageError
from scarwarden.files import write_journal
from scarwarden.git import head as git_head
from scarwarden.git import rev_parse
from scarwarden.index import open_index
from scarwarden.records import replace
from scarwarden.repo import MemoryRepo

if TYPE_CHECKING:  # pragma: no cover
    from scarwarden.audit.web.site import Pages
    from scarwarden.distill.result import DistillResult

VERDICTS = ("ACT", "ACT_AND_FLAG", "ASK_HUMAN")
#: Most recall-log lines one page shows.
LOG_LIMIT = 200
#: The preview ID of an offline preview: deterministic, it is run again to commit (a
#: model's preview is held under a random ID and committed as shown).
OFFLINE = "offline"
#: Model previews the server holds for the commit button (the newest ones).
HELD_PREVIEWS = 8
#: A commit ID as the form's ``head`` carries it: SHA-1's 40 hex digits, SHA-256's 64.
COMMIT_RE = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


def add_work_routes(app: Flask, site: Pages, repo: MemoryRepo) -> None:
    """``GET /log``, ``GET /distill`` and ``POST /distill``."""
    held: dict[str, DistillResult] = {}  # model previews by ID, oldest first
    # One preview at a time: two tabs opened at once pay for one model call, and the
    # held previews are never changed by two server threads together.
    previewing = threading.Lock()
    # One commit at a time: a double-click's second POST finds HEAD moved (409), and
    # never distils the HEAD the first one made, nor fails in the CLI's words.
    committing = threading.Lock()

    @app.get("/log")
    def recall_log() -> Response:
        return site.page("log.html", nav="log", **log_page(repo, request.args))

    @app.get("/distill")
    def undistilled() -> Response:
        done = request.args.get("committed")
        if not site.sealed(f"committed {done}", request.args.get("seal")):
            done = None  # a link may say anything: only this server's commit redirect is said
        waiting = write_journal.index_waiting(repo)  # the CLI's warning, after a commit
        try:
            with previewing:
                context = distill_page(repo, held)
        except GitError:
            if waiting is None:
                raise
            # The preview first finishes the write the lock held up, which needs the lock.
            return site.error(503, "Git's index is locked", f"{waiting}; the preview waits until it is free.")
        waiting = waiting if done else None
        return site.page("distill.html", nav="distill", committed=done, index_waiting=waiting, **context)

    @app.post("/distill")
    def commit_distill() -> Response:
        refused = _refuse_write(site)
        if refused is not None:
            return refused
        with committing:
            return _commit(site, repo, held, previewing)


def _commit(
    site: Pages, repo: MemoryRepo, held: dict[str, DistillResult], previewing: threading.Lock
) -> Response:
    """The distill form's commit: what its preview showed, if memory is where it was."""
    from scarwarden.distill.run import commit_preview, distill

    current = git_head(repo.root) or ""
    preview_id = request.form.get("preview", "")
    refused = _stale_or_unnamed(site, repo, current, preview_id)
    if refused is not None:
        return refused
    refused = _playbook_edited(site, repo)
    if refused is not None:
        return refused
    # Taken only now: a refused commit (fixed, then sent again) still finds it held.
    with previewing:
        result = held.pop(preview_id, None) if preview_id != OFFLINE else None
    if result is not None and result.head != current:  # held from an earlier look
        return _memory_changed(site)
    if preview_id != OFFLINE and result is None:
        return site.error(
            409,
            "This preview is no longer held",
            "The server no longer holds the model's preview (it restarted, or the preview "
            "was committed already); nothing was committed.",
            "open the Undistilled page again, check the new preview, then commit",
        )
    if result is None:  # the offline distiller, run again: it must read the previewed commit
        result = distill(repo, offline=True, dry_run=True)
    if result.head != current:
        return _memory_changed(site)
    try:
        result = commit_preview(repo, result)
    except (UsageError, GitError):
        if git_head(repo.root) == current:
            raise
        # Another process (the CLI) committed after the checks above: the same race as a
        # second sending of this form, not the form's fault in the CLI's words.
        return _memory_changed(site)
    done = result.commit or ""
    sealed = f"/distill?committed={done}&seal={site.seal(f'committed {done}')}"
    return redirect(sealed, code=303)  # type: ignore[return-value]


def _stale_or_unnamed(site: Pages, repo: MemoryRepo, current: str, preview_id: str) -> Response | None:
    """The commit form's preview checks: the commit it was made at is named and is HEAD,
    and the preview is named; an error page if one fails, else ``None``."""
    sent = request.form.get("head", "")
    if not sent:  # not "memory changed": nothing said it had not
        return site.error(
            400,
            "No commit named",
            "The form named no commit its preview was made at; nothing was committed.",
            "open the Undistilled page again, check the preview, then commit",
        )
    refused = _not_a_commit(site, repo, sent, current)
    if refused is not None:
        return refused
    if sent != current:
        return _memory_changed(site)
    if not preview_id:  # issue 27: the offline result was committed under a model's preview
        return site.error(
            400,
            "No preview named",
            "The form named no preview, and only what a preview showed is committed; nothing was committed.",
            "open the Undistilled page again, check the preview, then commit",
        )
    return None


def _memory_changed(site: Pages) -> Response:
    return site.error(
        409,
        "Memory changed since the preview",
        "The repository moved on after this preview was made; nothing was committed.",
        "open the Undistilled page again, check the new preview, then commit",
    )


def _not_a_commit(site: Pages, repo: MemoryRepo, sent: str, current: str) -> Response | None:
    """A 400 when the form's ``head`` is not a commit ID, or names no commit here: a
    malformed request, not "memory changed" (which sent the user to redo a preview that
    was fine); else ``None``."""
    if not COMMIT_RE.fullmatch(sent):
        return site.error(
            400,
            "Not a commit ID",
            "The form's 'head' is not a commit ID: it must be the 40 lower-case hexadecimal "
            "digits (64 in a SHA-256 repository) of the commit the preview was made at; "
            "nothing was committed.",
            "open the Undistilled page again, check the preview, then commit",
        )
    if sent != current and rev_parse(repo.root, sent) is None:
        return site.error(
            400,
            "No such commit",
            f"The form's 'head' ({sent}) names no commit in this repository: it must be the "
            "commit the preview was made at; nothing was committed.",
            "open the Undistilled page again, check the preview, then commit",
        )
    return None


def _playbook_edited(site: Pages, repo: MemoryRepo) -> Response | None:
    """A 409 when the playbook has uncommitted edits, which a distillation would lose:
    distill refused it with the CLI's way out (--branch, --no-commit) as a 400 "Cannot
    show this"; here the way out is to commit or discard them and look again."""
    from scarwarden.files.playbook_commit import playbook_has_edits

    if not playbook_has_edits(repo):
        return None
    return site.error(
        409,
        "The playbook has uncommitted edits",
        f"{repo.playbook_rel} has uncommitted changes; a distillation builds on the committed "
        "playbook and would overwrite them, so nothing was committed.",
        f"commit or discard them first (git diff {repo.playbook_rel} shows them), then open the "
        "Undistilled page again, check the preview and commit",
    )


def _refuse_write(site: Pages) -> Response | None:
    """The answer form's checks (read-only, UTF-8, same origin, CSRF token) for a commit."""
    return site.refuse_write(
        nothing_can="committed",
        read_only_hint="restart 'scarwarden serve' without --read-only, or run 'scarwarden distill'",
        cannot="Cannot commit this",
        reload="page",
    )


def log_page(repo: MemoryRepo, args: Any) -> dict[str, Any]:
    """The recall log filtered by verdict, date range and task text; each line with the
    episodes that carry its receipt (what the recall led to, as recorded: issue 20)."""
    from scarwarden.recall.log import episodes_carrying, read_log
    from scarwarden.times import parse_when

    verdict = (args.get("verdict") or "").strip().upper() or None  # as `log --verdict`
    since, until = (args.get("since") or "").strip(), (args.get("until") or "").strip()
    query = (args.get("q") or "").strip()
    error = None
    if verdict not in (None, *VERDICTS):  # said, not dropped in silence
        error = f"unknown verdict {args.get('verdict')!r} (use {', '.join(VERDICTS[:-1])} or {VERDICTS[-1]})"
        verdict = None
    try:
        since_at = parse_when(since) if since else None
        until_at = parse_when(until, end=True) if until else None
    except ScarwardenError as exc:
        since_at = until_at = None
        error = "; ".join(filter(None, [error, f"{exc.message} ({exc.hint})" if exc.hint else exc.message]))
    with open_index(repo) as index:
        entries = read_log(
            index, limit=LOG_LIMIT, since=since_at, until=until_at, task_grep=query or None, verdict=verdict
        )
        recorded = episodes_carrying(index, entries)
    return {
        "title": "Recall log",
        "entries": entries,
        "recorded": recorded,
        "verdicts": VERDICTS,
        "verdict": verdict,
        "since": since,
        "until": until,
        "query": query,
        "filter_error": error,
        "limit": LOG_LIMIT,
    }


def _preview(repo: MemoryRepo) -> DistillResult:
    """A dry run by the configured model (one retry at most: a person waits for the
    page), or the offline distiller when none is configured or it cannot be used."""
    from scarwarden.distill.run import preview
    from scarwarden.llm.client import client_from_config

    client = client_from_config(repo.config)
    if client is not None:
        client.settings = replace(client.settings, max_retries=min(client.settings.max_retries, 1))
    return preview(repo, client=client)


def _rules(repo: MemoryRepo) -> list[Any]:
    with open_index(repo) as index:
        return index.rules(include_retired=True)


def distill_page(repo: MemoryRepo, held: dict[str, DistillResult] | None = None) -> dict[str, Any]:
    """The episodes no distillation has read yet, and what distilling them would do (a
    dry run: nothing is written), by the model when it can be used, else offline.
    A model's preview is kept in ``held`` for the commit button, and shown again while
    HEAD has not moved rather than paid for on every page view."""
    head = git_head(repo.root)
    preview_id = next((key for key, r in reversed(held.items()) if r.head == head), None) if held else None
    result = held[preview_id] if held and preview_id else _preview(repo)
    if held is not None and preview_id is None and result.distiller == "model" and result.message:
        preview_id = secrets.token_urlsafe(12)
        held[preview_id] = result
        while len(held) > HELD_PREVIEWS:
            held.pop(next(iter(held)))
    with open_index(repo) as index:
        episodes = [index.get_episode(ep_id) for ep_id in result.new]
    import difflib

    diff = list(
        difflib.unified_diff(
            result.before.splitlines(),
            result.after.splitlines(),
            f"a/{result.playbook_rel}",
            f"b/{result.playbook_rel}",
            lineterm="",
        )
    )
    return {
        "title": "Undistilled",
        # A rule the preview adds is not in the playbook yet: "new in this distillation",
        # not a 404 link and not "not in the playbook" (an invented rule's words).
        "known_rules": {r.id for r in _rules(repo)},
        "new_rules": {c.rule_id for c in result.changes if c.kind == "add"}
        | {c.replaced_by for c in result.changes if c.replaced_by},
        "distiller": f"model {result.model}" if result.distiller == "model" else "the offline distiller",
        "notice": result.notice,
        "preview_id": preview_id or (OFFLINE if result.distiller != "model" else ""),
        "head": result.head,
        "episodes": [ep for ep in episodes if ep is not None],
        "changes": [c.describe() for c in result.changes],
        "drops": [d.describe() for d in result.drops],
        "review": [flag.describe() for flag in result.review],
        "diff": diff,
        "message": result.message,
    }
