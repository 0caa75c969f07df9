"""The audit web UI: a small Flask app over one memory repository.

Security, because episodes are untrusted text and the server can write commits:

* every page goes through one autoescaping Jinja environment (:mod:`.render`), and a
  Content-Security-Policy allows no script at all, so injected markup stays inert;
* the only write (recording a human's answer) is a POST carrying a per-process CSRF
  token, and a request whose ``Origin`` (or, failing that, ``Referer``) names another
  host is refused; ``read_only`` turns every write into a 403;
* requests whose ``Host`` is not one of ``allowed_hosts`` are refused (DNS
  rebinding: a page on evil.example re-pointed at 127.0.0.1 would otherwise be
  same-origin with this server).

The checks themselves (hosts, origin, headers) are in :mod:`.security`.
"""

from __future__ import annotations

import secrets
from collections.abc import Collection, Mapping
from functools import partial
from pathlib import Path

from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException

from scarwarden.audit.web import pages, render
from scarwarden.audit.web.security import (
    add_security_headers,
    embedded_elsewhere,
    form_is_utf8,
    host_name,
    path_is_utf8,
)
from scarwarden.audit.web.site import MAX_QUERY_CHARS, Pages
from scarwarden.audit.web.taskpage import task_page
from scarwarden.errors import ConfigError, ExitCode, GitError, ScarwardenError, UsageError, ValidationError
from scarwarden.files import write_journal
from scarwarden.files.rule_ids import canonical as canonical_rule_id
from scarwarden.index import open_index
from scarwarden.repo import MemoryRepo, open_repo

#: Largest request body accepted (the human-answer form); larger ones get 413.
MAX_POST_BYTES = 256 * 1024


def _http_status(exc: ScarwardenError) -> int:
    """A usage error is the request's (400), but a bad setting of the server's own
    (``scarwarden.yaml``, an environment variable: :class:`ConfigError`) is not; a model
    that failed is a bad gateway (502); anything else, such as a playbook that does not
    parse, is the server's (500)."""
    code = int(exc.exit_code)
    if code == ExitCode.USAGE and not isinstance(exc, ConfigError):
        return 400
    if code in (ExitCode.MODEL_UNREACHABLE, ExitCode.MODEL_ERROR):
        return 502
    return 500


def create_app(
    repo_root: Path | str,
    *,
    read_only: bool = False,
    allowed_hosts: Collection[str] | None = None,
    environ: Mapping[str, str] | None = None,
    csrf_token: str | None = None,
) -> Flask:
    """The UI for the memory in ``repo_root``.

    ``allowed_hosts``: host names accepted in the ``Host`` header (``None``: any; the
    ``serve`` command passes the loopback names when bound to loopback). ``environ``
    is where the model's API key is looked up (the task page's answers).
    """
    repo = open_repo(repo_root)
    app = Flask(
        "scarwarden.audit.web",
        static_folder=str(render.STATIC),
        static_url_path="/static",
        template_folder=None,
    )
    app.config["SCARWARDEN_READ_ONLY"] = read_only
    # The one form posts a task and an answer; an episode is at most 64 KiB anyway.
    app.config["MAX_CONTENT_LENGTH"] = MAX_POST_BYTES
    site = Pages(
        render.environment(),
        render.Links(),
        read_only=read_only,
        token=csrf_token or secrets.token_urlsafe(32),
    )
    hosts = None if allowed_hosts is None else {h.lower() for h in allowed_hosts}
    _add_guards(app, site, hosts)
    _add_repo_guard(app, site, repo)
    _add_index_lock_page(app, site, repo)
    _add_read_routes(app, site, repo, environ)
    _add_answer_route(app, site, repo)
    from scarwarden.audit.web.confirmpage import add_confirm_route
    from scarwarden.audit.web.taskpage import add_task_post_route
    from scarwarden.audit.web.workpages import add_work_routes

    add_task_post_route(app, site, repo, environ)  # the explicit recall: logged (GET never writes)
    add_work_routes(app, site, repo)  # the recall log, undistilled episodes (issue 18)
    add_confirm_route(app, site, repo)  # ACT_AND_FLAG: "yes, this rule applies"
    return app


#: The pages whose GET may call the model (a task's answer, the distillation preview).
MODEL_PAGES = ("/task", "/distill")


def _add_guards(app: Flask, site: Pages, hosts: set[str] | None) -> None:
    """The host check before every request, the security headers after, error pages
    (:func:`_add_error_pages`)."""

    @app.before_request
    def check_host() -> Response | None:
        if hosts is not None and (host_name(request.host) or "").lower() not in hosts:
            # Without the header, request.host is waitress's placeholder, waitress.invalid.
            sent = request.headers.get("Host")
            return site.error(
                400,
                "Unknown host",
                "The request has no Host header."
                if sent is None
                else f"This server does not answer to the host {sent!r}.",
                "open it through 127.0.0.1 or localhost",
            )
        if not form_is_utf8("application/x-www-form-urlencoded", request.query_string):
            # Werkzeug keeps %FF as the text "%FF": a task page would put it in its form.
            return site.error(
                400, "Not valid UTF-8", "The address is not valid UTF-8 (a %FF-style escape in its query)."
            )
        if not path_is_utf8(request.environ.get("PATH_INFO", "")):
            return site.error(
                400, "Not valid UTF-8", "The address is not valid UTF-8 (a %FF-style escape in its path)."
            )
        if request.path in MODEL_PAGES and embedded_elsewhere(request.headers):
            # <img src="http://127.0.0.1:5054/task?task=..."> on any page the user opens
            # carries the loopback Host: each load would pay for model answers.
            return site.error(
                403,
                "Cross-site request refused",
                "Another site asked for this page as part of its own (an image, a frame, a "
                "script); this page can call the model, so nothing was asked.",
                "open the page itself: follow a link to it, or type its address",
            )
        if request.method == "HEAD" and request.path in MODEL_PAGES:
            # Flask answers HEAD by running the GET and dropping the body: a link checker
            # or a preview would pay for a recall and a model call it never reads.
            return Response(status=200, content_type="text/html; charset=utf-8")
        return None

    @app.after_request
    def headers(response: Response) -> Response:
        add_security_headers(response.headers)
        return response

    _add_error_pages(app, site)
    _add_query_limits(app, site)


def _add_query_limits(app: Flask, site: Pages) -> None:
    """A query value longer than :data:`MAX_QUERY_CHARS` (a task: recall's limit) is a
    400 before any page reads it."""

    @app.before_request
    def check_query_lengths() -> Response | None:
        from scarwarden.recall.engine import MAX_TASK_CHARS

        for name, value in request.args.items(multi=True):
            limit = MAX_TASK_CHARS if name == "task" else MAX_QUERY_CHARS
            if len(value) > limit:
                return site.error(
                    400,
                    "Query too long",
                    f"The address's {name!r} is {len(value):,} characters; this page takes at most "
                    f"{limit:,} (a task: {MAX_TASK_CHARS:,}, any other search or filter value: "
                    f"{MAX_QUERY_CHARS:,}); nothing was searched.",
                    "give the request itself, not a whole document" if name == "task" else "shorten it",
                )
        return None


def _add_error_pages(app: Flask, site: Pages) -> None:
    """An HTTP error or a Scarwarden error as the site's error page."""

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException) -> Response:
        status = exc.code or 500
        if status == 413 and (request.content_length or 0) <= MAX_POST_BYTES:
            # Werkzeug's other 413: a multipart form of more parts than it reads (its
            # words were the size's, for a form well under the size).
            return site.error(
                413,
                "Too many form fields",
                f"The form has more than {request.max_form_parts or 0:,} fields, the most this "
                "server reads; nothing was written.",
                "post the page's own form: reload it and submit again",
            )
        if status == 413:  # Werkzeug's words name no limit and say nothing of what was kept
            return site.error(
                413,
                exc.name,
                f"The request body is larger than {MAX_POST_BYTES // 1024} KiB, the most this "
                "server accepts; nothing was written.",
            )
        return site.error(status, exc.name, exc.description or "")

    @app.errorhandler(ScarwardenError)
    def scarwarden_error(exc: ScarwardenError) -> Response:
        return _error_page(site, exc)


def _error_page(site: Pages, exc: ScarwardenError) -> Response:
    return site.refused(_http_status(exc), "Cannot show this", exc)


def _add_index_lock_page(app: Flask, site: Pages, repo: MemoryRepo) -> None:
    """A write while git's index is still locked after an earlier write: it must first
    finish that one, which needs the lock, and git refused in its own words as a 500
    ("git update-index --add failed: fatal: Unable to create ...index.lock"). It is a
    503 in the words the page after that earlier write used."""

    @app.errorhandler(GitError)
    def git_error(exc: GitError) -> Response:
        waiting = write_journal.index_waiting(repo)
        if waiting is None:
            return _error_page(site, exc)
        return site.error(
            503,
            "Git's index is locked",
            f"An earlier write is not finished: {waiting}; nothing was written.",
            "once the lock is gone, submit the form again",
        )


def _add_repo_guard(app: Flask, site: Pages, repo: MemoryRepo) -> None:
    """Before every page, after the host check: the memory is still where the server
    was started. Moved or deleted while serving, the pages said git's own words (a 500),
    /distill that the repository had "no commits yet", the ledger "0 episodes", and the
    answer form committed into a repository with no memory, which the CLI refuses."""
    dot_git = repo.root / ".git"
    watched = dot_git.exists()  # not there with GIT_DIR set elsewhere: nothing to watch

    @app.before_request
    def check_repo() -> Response | None:
        if request.path.startswith("/static/"):  # the error page's own stylesheet
            return None
        if watched and not dot_git.exists():
            gone = f"{repo.root} is no longer a git repository (its .git was moved or deleted)"
        elif not repo.is_initialised():
            gone = f"{repo.root} no longer holds a Scarwarden memory (no {repo.playbook_rel})"
        else:
            return None
        return site.error(
            503,
            "Memory not found",
            f"{gone} while this server ran; nothing was shown or written.",
            "put it back, or stop this server (Ctrl-C) and run 'scarwarden serve' where the memory now is",
        )


def _add_read_routes(app: Flask, site: Pages, repo: MemoryRepo, environ: Mapping[str, str] | None) -> None:
    """The pages: the playbook, a rule, an episode, the ledger, the task page."""

    @app.get("/")
    def playbook() -> Response:
        with open_index(repo) as index:
            ctx = pages.playbook_page(index, tag=request.args.get("tag"), query=request.args.get("q"))
        return site.page("playbook.html", nav="playbook", **ctx)

    @app.get("/rules/<rule_id>")
    def rule(rule_id: str) -> Response:
        with open_index(repo) as index:
            ctx = pages.rule_page(repo, index, canonical_rule_id(rule_id))
        if ctx is None:
            return site.error(404, "No such rule", f"There is no rule {rule_id} in the playbook.")
        return site.page("rule.html", nav="playbook", **ctx)

    @app.get("/episodes/<episode_id>")
    def episode(episode_id: str) -> Response:
        with open_index(repo) as index:
            ctx = pages.episode_page(index, episode_id)
        if ctx is None:
            return site.error(404, "No such episode", f"There is no episode {episode_id} in the ledger.")
        recorded = site.was_recorded(episode_id, request.args.get("recorded"))  # not any link's word
        waiting = write_journal.index_waiting(repo) if recorded else None  # the CLI's warning
        from scarwarden.audit.web.recording import recorded_warnings

        ctx["warnings"] = recorded_warnings(repo, ctx["episode"]) if recorded else []  # ask's on stderr
        return site.page("episode.html", nav="ledger", recorded=recorded, index_waiting=waiting, **ctx)

    _add_media_routes(app, site, repo)

    @app.get("/ledger")
    def ledger() -> Response:
        a = request.args
        with open_index(repo) as index:
            ctx = pages.ledger_page(
                index,
                month=a.get("month"),
                tag=a.get("tag"),
                agent=a.get("agent"),
                query=a.get("q"),
                page=pages.page_number(a.get("page")),
            )
        return site.page("ledger.html", nav="ledger", **ctx)

    @app.get("/task")
    def task() -> Response:
        ctx = task_page(
            repo, request.args.get("task"), mode=request.args.get("memory", "both"), environ=environ
        )
        return site.page("task.html", ctx.pop("status", 200), **ctx)


def _add_media_routes(app: Flask, site: Pages, repo: MemoryRepo) -> None:
    """An image's page (the episodes it is attached to) and its bytes (issue 19)."""

    @app.get("/images/<name>")
    def image(name: str) -> Response:
        from scarwarden.audit.web.media import image_page

        with open_index(repo) as index:
            ctx = image_page(repo, index, name)
        if ctx is None:
            return site.error(404, "No such image", f"There is no stored image {name}.")
        return site.page("image.html", nav="ledger", **ctx)

    @app.get("/media/<name>")
    def media(name: str) -> Response:
        from scarwarden.audit.web.media import media_response

        return media_response(site, repo, name)


def _form_text(name: str) -> str:
    """A form field's text. Browsers send a textarea's line breaks as CRLF (the form
    encoding's convention, not the user's text): they are read as newlines, so the
    input policy's "no carriage return" never refuses a multi-line answer."""
    return request.form.get(name, "").replace("\r\n", "\n")


def _add_answer_route(app: Flask, site: Pages, repo: MemoryRepo) -> None:
    """POST /answer: record a human's answer (CSRF token, same origin; a form sent twice is recorded once)."""

    from scarwarden.audit.web.answerform import held_up, refused_answer, stale_answer, unusable_receipt

    @app.post("/answer")
    def answer() -> Response:
        refused = site.refuse_write(
            nothing_can="recorded",
            read_only_hint="restart 'scarwarden serve' without --read-only to record answers",
            cannot="Cannot record this answer",
            reload="task page",
            stale=lambda: stale_answer(site, repo),  # a page from before a restart: not lost
        )
        unusable = partial(unusable_receipt, site, repo)  # the form again, without that receipt
        refused = refused or site.bad_receipt(repo, "Cannot record this answer", unusable)
        if refused is not None:
            return refused
        from scarwarden.audit.web.recording import record_answer_once

        try:  # sent twice from one recall (a double-click): recorded once
            ep_id = record_answer_once(
                repo,
                _form_text("task"),
                _form_text("answer"),
                request.form.get("receipt") or None,
                form=site.form(),
            )
        except (UsageError, ValidationError) as exc:  # what was posted: the client's to fix
            return refused_answer(site, repo, exc)  # the form again, their text in it
        except GitError as exc:  # git's index locked: the form again too
            return held_up(site, repo, exc)
        return site.recorded(ep_id)
