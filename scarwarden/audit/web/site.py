"""What every page of the UI shares: rendering a template or an error page as a response."""

from __future__ import annotations

from typing import Any

from flask import Response
from jinja2 import Environment

from scarwarden.audit.web import render


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
