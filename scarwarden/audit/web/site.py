"""What every page of the UI shares: rendering a template or an error page as a response."""

from __future__ import annotations

import hmac
from collections.abc import Callable
from typing import Any

from flask import Response, redirect, request
from jinja2 import Environment

from scarwarden.audit.web import render
from scarwarden.audit.web.recording import Form, SentForms
from scarwarden.audit.web.security import form_is_utf8, named_here, same_origin

#: Longest value a query parameter may hold (characters), but a task: a search or a
#: filter needs far less, and pages repeat their filters in every link. A task may hold
#: what recall accepts (:data:`~scarwarden.recall.engine.MAX_TASK_CHARS`). A longer
#: value is a 400, never cut: a shorter search would silently mean something else.
MAX_QUERY_CHARS = 1000
#: The bodies a write form may post: what a browser sends for the UI's forms.
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
#: Form fields bounded by the body's limit and the episode's cap alone (a human's
#: answer, a receipt's JSON); a task is bounded by recall's limit, any other field (a
#: rule ID, a commit, a preview, a mode) as a query value is.
UNBOUNDED_FIELDS = ("answer", "receipt")


class Pages:
    """Renders a template (or an error page) as a response, with what every page needs:
    the links, whether the server is read-only, and the form's CSRF token."""

    def __init__(self, env: Environment, links: render.Links, *, read_only: bool, token: str) -> None:
        self.env = env
        self.links = links
        self.read_only = read_only
        self.token = token
        self.forms = SentForms()  # what the forms without a receipt recorded

    def page(self, template: str, status: int = 200, **context: Any) -> Response:
        context.setdefault("nav", "")
        context.setdefault("generated", None)
        html = render.render(
            self.env, template, self.links, read_only=self.read_only, csrf_token=self.token, **context
        )
        return Response(html, status=status, mimetype="text/html")

    def recorded(self, episode_id: str) -> Response:
        """The 303 a form that recorded (or had recorded) ``episode_id`` answers: to its
        page, which says it was recorded and committed. The claim is signed with this
        server's token: ``?recorded=1`` said it of any episode, on any link."""
        seal = self.seal(f"recorded {episode_id}")
        return redirect(f"{self.links.episode(episode_id)}?recorded={seal}", code=303)  # type: ignore[return-value]

    def was_recorded(self, episode_id: str, seal: str | None) -> bool:
        """Whether ``seal`` (the episode page's ``recorded``) is what :meth:`recorded`
        signed for ``episode_id``: a form of this server recorded it."""
        return self.sealed(f"recorded {episode_id}", seal)

    def form(self) -> Form | None:
        """The posted form's ID (a task page that logged no recall, so sent no receipt)
        with what this server's forms recorded, or ``None`` when it sent none."""
        sent = request.form.get("form")
        return (self.forms, sent) if sent else None

    def seal(self, claim: str) -> str:
        """``claim`` signed with this server's token, for a page a write redirects to."""
        return hmac.new(self.token.encode(), claim.encode(), "sha256").hexdigest()[:20]

    def sealed(self, claim: str, seal: str | None) -> bool:
        """Whether ``seal`` is :meth:`seal`'s for ``claim``."""
        return bool(seal) and hmac.compare_digest((seal or "").encode(), self.seal(claim).encode())

    def error(self, status: int, heading: str, message: str, hint: str | None = None) -> Response:
        return self.page(
            "error.html", status, title=heading, code=status, heading=heading, message=message, hint=hint
        )

    def refused(self, status: int, heading: str, exc: Any) -> Response:
        """The error page of a :class:`~scarwarden.errors.ScarwardenError`: its message,
        each of its problems (which field, what is wrong in it) and its hint."""
        message = exc.message + "".join(f"\n{p}" for p in exc.problems)
        return self.error(status, heading, message, exc.hint)

    def bad_receipt(
        self, repo: Any, cannot: str, show: Callable[[str, str], Response] | None = None
    ) -> Response | None:
        """A 400 in the page's words when the form's ``receipt`` (the ID of the recall the
        task page logged) does not resolve, or is the recall of another task than the
        form's, else ``None``: recording refused them with the CLI's hints ("pass the
        receipt object recall printed (scarwarden recall --json)"; the gate's "pass that
        receipt ... the same check the pre-commit hook, 'check' and 'verify' run")."""
        from scarwarden.errors import ScarwardenError
        from scarwarden.recall.receipts import resolve

        value = request.form.get("receipt")
        again = (
            "recall the task again on the task page and submit its form there: the form sends "
            "that recall's receipt"
        )
        try:
            recalled = resolve(repo, value, source="receipt") if value else None
        except ScarwardenError as exc:
            message = exc.message + "".join(f"\n{p}" for p in exc.problems)
            return (show or self._refused_400(cannot))(f"{message}\nNothing was written.", again)
        task = request.form.get("task", "").replace("\r\n", "\n").strip()
        if recalled is not None and task and recalled.get("task") != task:
            return (show or self._refused_400(cannot))(
                f"The form's receipt {recalled.get('receipt')} is the recall of another task "
                f"({_clip(str(recalled.get('task')))!r}, not {_clip(task)!r}); nothing was written.",
                again,
            )
        return None

    def _refused_400(self, cannot: str) -> Callable[[str, str], Response]:
        return lambda message, hint: self.error(400, cannot, message, hint)

    def refuse_write(
        self,
        *,
        nothing_can: str,
        read_only_hint: str,
        cannot: str,
        reload: str,
        read_only_shows: bool = False,
        stale: Callable[[], Response] | None = None,
    ) -> Response | None:
        """Every write form's checks, in order: read-only, UTF-8, same origin and the CSRF
        token; an error page if one fails, else ``None``. The words name the form's act.
        ``read_only_shows``: a read-only server answers the form by showing a page and
        writing nothing (the task form), so only the body is checked: a %FF in it was
        shown as the task, text nobody typed. ``stale``: the page a form gets whose token
        is not this process's but whose origin the browser named as this server (a page
        shown before the server restarted), instead of the 403 that lost what was typed."""
        if self.read_only and not read_only_shows:
            return self.error(
                403, "Read-only", f"This server is read-only: nothing can be {nothing_can}.", read_only_hint
            )
        if request.mimetype not in FORM_TYPES:
            # Not a form (JSON, text, no type): its token cannot be read, and "cross-site"
            # would send a script's author hunting for the wrong problem.
            return self.error(
                415,
                "Not a form",
                f"This address takes a form ({FORM_TYPES[0]}), not "
                f"{request.mimetype or 'a body without a Content-Type'}; nothing was written.",
                f"post the {reload}'s form, or send {FORM_TYPES[0]} with its csrf_token field",
            )
        # Before request.form: the raw body is cached here and the form parsed from it.
        if not form_is_utf8(request.mimetype, request.get_data(cache=True)):
            return self.error(400, cannot, "The form is not valid UTF-8; nothing was written.")
        if request.mimetype == FORM_TYPES[1] and request.get_data() and not (request.form or request.files):
            # Werkzeug reads a multipart body it cannot parse (no boundary, cut short) as
            # no fields at all: "cross-site" would name the wrong problem.
            return self.error(
                400,
                cannot,
                "The form could not be read: a multipart body without its boundary, or cut "
                "short; nothing was written.",
                f"post the {reload}'s form, or send {FORM_TYPES[0]}",
            )
        sent = request.form.get("csrf_token", "")
        forged = not same_origin(request.headers, request.host) or not hmac.compare_digest(
            sent.encode(), self.token.encode()
        )
        if forged and not self.read_only:  # read-only: the task form, which writes nothing
            if stale is not None and named_here(request.headers, request.host):
                # This server's own page, from before it restarted: the form again, not lost.
                return self._repeated(cannot, reload) or self._too_long(cannot) or stale()
            return self.error(
                403,
                "Cross-site request refused",
                "This form did not come from this server's own page.",
                f"reload the {reload} and submit the form again",
            )
        return self._repeated(cannot, reload) or self._too_long(cannot)

    def _repeated(self, cannot: str, reload: str) -> Response | None:
        """A 400 naming the first field the form holds more than once, else ``None``: each
        page's form sends each field once, and the first value alone was read (two
        answers posted, the first committed, the second dropped without a word)."""
        for name, values in request.form.lists():
            if len(values) > 1:
                return self.error(
                    400,
                    cannot,
                    f"The form holds {name!r} {len(values)} times; each field is sent once, so "
                    "which value was meant cannot be known; nothing was written.",
                    f"post the {reload}'s form: reload it and submit again",
                )
        return None

    def _too_long(self, cannot: str) -> Response | None:
        """A 400 naming the first form field longer than its limit (what ``ask``, recall
        and the query take for the same value), else ``None``: a 25,000-character task
        was recorded that recall refuses, and a long rule ID echoed in the page."""
        from scarwarden.recall.engine import MAX_TASK_CHARS

        for name, value in request.form.items(multi=True):
            if name in UNBOUNDED_FIELDS:
                continue
            limit = MAX_TASK_CHARS if name == "task" else MAX_QUERY_CHARS
            size = len(value.replace("\r\n", "\n").strip() if name == "task" else value)
            if size > limit:
                return self.error(
                    400,
                    cannot,
                    f"The form's {name!r} is {size:,} characters; this form takes at most {limit:,} "
                    f"(a task: {MAX_TASK_CHARS:,}, as recall; a rule ID or any other field: "
                    f"{MAX_QUERY_CHARS:,}); nothing was written.",
                    "give the request itself, not a whole document"
                    if name == "task"
                    else "post the page's own form: reload it and submit again",
                )
        return None


def _clip(text: str, width: int = 80) -> str:
    """``text`` cut to ``width`` characters, saying so: a task may hold 20,000."""
    return text if len(text) <= width else text[: width - 1] + "…"
