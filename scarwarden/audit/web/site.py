"""What every page of the UI shares: rendering a template or an error page as a response."""

from __future__ import annotations

import hmac
from typing import Any

from flask import Response, request
from jinja2 import Environment

from scarwarden.audit.web import render
from scarwarden.audit.web.security import form_is_utf8, same_origin

#: The bodies a write form may post: what a browser sends for the UI's forms.
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


class Pages:
    """Renders a template (or an error page) as a response, with what every page needs:
    the links, whether the server is read-only, and the form's CSRF token."""

    def __init__(self, env: Environment, links: render.Links, *, read_only: bool, token: str) -> None:
        self.env = env
        self.links = links
        self.read_only = read_only
        self.token = token

    def page(self, template: str, status: int = 200, **context: Any) -> Response:
        context.setdefault("nav", "")
        context.setdefault("generated", None)
        html = render.render(
            self.env, template, self.links, read_only=self.read_only, csrf_token=self.token, **context
        )
        return Response(html, status=status, mimetype="text/html")

    def error(self, status: int, heading: str, message: str, hint: str | None = None) -> Response:
        return self.page(
            "error.html", status, title=heading, code=status, heading=heading, message=message, hint=hint
        )

    def refuse_write(
        self, *, nothing_can: str, read_only_hint: str, cannot: str, reload: str
    ) -> Response | None:
        """Every write form's checks, in order: read-only, UTF-8, same origin and the CSRF
        token; an error page if one fails, else ``None``. The words name the form's act."""
        if self.read_only:
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
        sent = request.form.get("csrf_token", "")
        if not same_origin(request.headers, request.host) or not hmac.compare_digest(
            sent.encode(), self.token.encode()
        ):
            return self.error(
                403,
                "Cross-site request refused",
                "This form did not come from this server's own page.",
                f"reload the {reload} and submit the form again",
            )
        return None
