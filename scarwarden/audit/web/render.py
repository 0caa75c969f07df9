"""Templates and links shared by the live UI and the static export.

Everything is rendered by one Jinja environment with autoescaping on: episodes are
untrusted text, so nothing from the memory reaches a page unescaped. The one filter
that produces markup (:func:`linkify`) escapes first and only then wraps rule and
episode IDs (which are ``[A-Za-z0-9-]`` by construction) in links.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import jinja2
from markupsafe import Markup, escape

from scarwarden.files.rule_ids import RULE_ID_PATTERN

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"

#: Characters that reorder or hide text where they stand (bidi embeddings, overrides,
#: isolates and marks; zero-width space, word joiner, BOM): a U+202E shows "gnp.exe" as
#: "exe.png". Joiners (U+200C, U+200D) are left alone: emoji and scripts need them.
_HIDDEN = re.compile("[\u061c\u200b\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]")
#: What is not page text: tags, and the text of a textarea (a form's value) or the title.
_NOT_TEXT = re.compile(r"(<textarea\b[^>]*>.*?</textarea>|<title>.*?</title>|<[^>]*>)", re.S)

_IDS = re.compile(rf"\b({RULE_ID_PATTERN})\b|\b(ep-[0-9a-z][0-9a-z-]{{1,39}}[0-9a-z])\b")


class Links:
    """Where pages live: server paths (``/rules/PB-01``) or, in a static export,
    relative ``.html`` files (``../rules/PB-01.html`` from an episode page)."""

    def __init__(self, *, static: bool = False, depth: int = 0) -> None:
        self.static = static
        self.up = "../" * depth

    def _query(self, base: str, query: dict[str, Any]) -> str:
        query = {k: v for k, v in query.items() if v not in (None, "", False)}
        return f"{base}?{urlencode(query)}" if query else base

    def playbook(self, **query: Any) -> str:
        return f"{self.up}index.html" if self.static else self._query("/", query)

    def tag(self, tag: str) -> str | None:
        """The playbook filtered by a tag (``None`` in an export: no server to filter)."""
        return None if self.static else self._query("/", {"tag": tag})

    def rule(self, rule_id: str) -> str:
        return f"{self.up}rules/{rule_id}.html" if self.static else f"/rules/{rule_id}"

    def episode(self, episode_id: str) -> str:
        return f"{self.up}episodes/{episode_id}.html" if self.static else f"/episodes/{episode_id}"

    def ledger(self, **query: Any) -> str:
        return f"{self.up}ledger.html" if self.static else self._query("/ledger", query)

    def task(self, **query: Any) -> str | None:
        return None if self.static else self._query("/task", query)

    def answer(self) -> str | None:
        """Where the human-answer form posts (no such thing in an export)."""
        return None if self.static else "/answer"

    def asset(self, name: str) -> str:
        return f"{self.up}static/{name}" if self.static else f"/static/{name}"

    def image(self, name: str) -> str:
        """An image's page: the image, the episodes attaching it, the visual rules."""
        return f"{self.up}images/{name}.html" if self.static else f"/images/{name}"

    def media(self, name: str) -> str:
        """An image attached to an episode (``<sha256>.<ext>``, issue 19)."""
        return f"{self.up}media/{name}" if self.static else f"/media/{name}"


def linkify(
    text: object, links: Links, known: Collection[str] | None = None, new: Collection[str] = ()
) -> Markup:
    """Escape ``text``, then turn rule and episode IDs into links. With ``known`` (the
    playbook's rule IDs), a rule ID not among them is marked "not in the playbook"
    inline instead of linking to a 404 (an answer that invented a rule, issue 18); one
    in ``new`` (a distillation preview adds it) is marked "new in this distillation"."""
    escaped = str(escape("" if text is None else str(text)))

    def link(match: re.Match[str]) -> str:
        rule_id, ep_id = match.groups()
        if rule_id and rule_id in new:
            return (
                f'<span class="new-rule" title="new in this distillation">{rule_id}</span>'
                '<span class="new-rule-note"> (new in this distillation)</span>'
            )
        if rule_id and known is not None and rule_id not in known:
            return (
                f'<span class="missing-rule" title="not in the playbook">{rule_id}</span>'
                '<span class="missing-rule-note"> (not in the playbook)</span>'
            )
        href = links.rule(rule_id) if rule_id else links.episode(ep_id)
        return f'<a href="{escape(href)}">{match.group(0)}</a>'

    # Safe: the text was escaped above; only ID characters [A-Za-z0-9-] go into tags.
    return Markup(_IDS.sub(link, escaped))  # noqa: S704


def show_hidden(html: str) -> str:
    """The page with each character of :data:`_HIDDEN` in its text shown as its code
    point (``U+202E``), so the page reads in the order the text is stored. Only text
    between tags: attributes and a textarea keep the character, so a form sends the
    text as stored. Safe to split on ``<``: every ``<`` in untrusted text is escaped."""
    if not _HIDDEN.search(html):
        return html

    def mark(match: re.Match[str]) -> str:
        return f'<span class="hidden-char">U+{ord(match.group(0)):04X}</span>'

    parts = _NOT_TEXT.split(html)
    for i in range(0, len(parts), 2):  # the odd ones are what _NOT_TEXT matched
        parts[i] = _HIDDEN.sub(mark, parts[i])
    return "".join(parts)


def diff_class(line: str) -> str:
    """CSS class for one line of a unified diff."""
    if line.startswith(("+++", "---")):
        return "meta"
    if line.startswith("@@"):
        return "hunk"
    return {"+": "add", "-": "del"}.get(line[:1], "ctx")


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["diff_class"] = diff_class
    env.filters["short"] = lambda sha: (sha or "")[:10]
    return env


def render(env: jinja2.Environment, template: str, links: Links, **context: Any) -> str:
    """Render a page; ``links`` and a ``linkify`` bound to them are always available."""
    context.setdefault("read_only", True)
    context.setdefault("csrf_token", "")
    context.setdefault("title", "Scarwarden")
    known = context.get("known_rules")
    new = context.get("new_rules") or ()
    html = env.get_template(template).render(
        links=links, linkify=lambda text: linkify(text, links, known, new), **context
    )
    return show_hidden(html)
