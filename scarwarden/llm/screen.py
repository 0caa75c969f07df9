"""What a request to a model may carry: every text screened as the ledger screens episodes.

A credential never leaves the machine through a Scarwarden door (docs/privacy.md, "What
is sent to a model"). Every request is built by :class:`~scarwarden.llm.client.ChatClient`,
so this runs there, on every text of every message: the task of ``answer``, the rules of
the playbook (a rule typed into playbook.md by hand was never screened as an episode),
the episodes ``distill`` sends, the image audit's prompt, a repair request.

A credential is **replaced**, not refused: ``[redacted github-token]`` is sent where the
value was, and the caller is told (:attr:`Screened.redacted`, a warning). A task that
mentions a key by accident ("... token ghp_...") still gets its answer, which needs the
words around the key and never the key itself, and the key stays here; a refusal would
only make the user type the task again without it. The scanner is the ledger's
(:mod:`scarwarden.files.secret_scan`), with ``secrets.allow`` and the inline marker
``scarwarden:allow-secret`` (on the line) honoured. Personal data follows ``privacy:``:
what ``refuse`` refuses is sent as ``[email]``, ``[phone]``, ``[card]`` (as ``episode add
--redact-pii`` writes it), what ``warn`` lets through is sent and said. Images (data URLs)
are not text and are sent as they are.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scarwarden.logs import log

if TYPE_CHECKING:
    from scarwarden.config import PrivacySettings


@dataclass(frozen=True)
class Screened:
    """A request's messages as they may be sent, the kinds replaced in them (credentials,
    and personal data ``privacy: refuse`` covers) and the personal data ``warn`` sends."""

    messages: list[dict[str, Any]]
    redacted: tuple[str, ...] = ()
    personal: tuple[str, ...] = ()

    def notes(self) -> list[str]:
        """What the caller is told: the kinds, never a value."""
        from scarwarden.files.privacy import LABELS

        notes = []
        if self.redacted:
            notes.append(
                f"the request to the model had {', '.join(self.redacted)} replaced by a placeholder "
                "([redacted <kind>], [email]...): it never left this machine; rotate a credential "
                "that is real (a known false positive: secrets.allow in scarwarden.yaml)"
            )
        if self.personal:
            said = ", ".join(f"{LABELS[kind]} (privacy.{kind}: warn)" for kind in self.personal)
            notes.append(
                f"the request to the model holds personal data: {said}; it was sent "
                "('refuse' in scarwarden.yaml sends a placeholder instead)"
            )
        return notes


def screen_messages(
    messages: Sequence[Mapping[str, Any]],
    allow: Collection[str],
    privacy: PrivacySettings,
    said: set[str] | None = None,
) -> Screened:
    """``messages`` as they may leave the machine (new dicts: the caller's are unchanged).
    Each note of :meth:`Screened.notes` not in ``said`` is logged as a warning (stderr in
    the CLI, the host's handlers elsewhere) and added to it: QC's retakes send the same
    task again, and say it once."""
    redacted: list[str] = []
    personal: list[str] = []
    refuse, warn = privacy.kinds("refuse"), privacy.kinds("warn")

    def clean(text: str) -> str:
        text, kinds = screen_text(text, allow, refuse)
        redacted.extend(kinds)
        if warn:
            from scarwarden.files import privacy as personal_data

            personal.extend(kind for kind, _start, _end in personal_data.find(text, warn))
        return text

    out = []
    for message in messages:
        sent = dict(message)
        content = sent.get("content")
        if isinstance(content, str):
            sent["content"] = clean(content)
        elif isinstance(content, list):  # parts: text is screened, an image_url is not text
            sent["content"] = [
                {**part, "text": clean(part["text"])}
                if isinstance(part, dict) and isinstance(part.get("text"), str)
                else part
                for part in content
            ]
        out.append(sent)
    screened = Screened(out, tuple(dict.fromkeys(redacted)), tuple(dict.fromkeys(personal)))
    said = set() if said is None else said
    for note in screened.notes():
        if note not in said:
            said.add(note)
            log.warning("%s", note)
    return screened


def screen_text(text: str, allow: Collection[str], refuse: tuple[str, ...]) -> tuple[str, list[str]]:
    """``text`` with each credential replaced by ``[redacted <kind>]`` and the personal
    data of the ``refuse`` kinds by ``[kind]``; and the kinds replaced.

    The value is replaced where the text holds it as the scanner read it; one it holds
    otherwise (look-alike letters, zero-width characters, base64) takes its lines with
    it, and if anything were still found, the whole text would go."""
    from scarwarden.files import privacy

    found = _credentials(text, allow)
    kinds = list(dict.fromkeys(kind for kind, _value, _line in found))
    for kind, value, _line in found:
        text = text.replace(value, f"[redacted {kind}]")
    left = _credentials(text, allow) if found else []
    if left:
        lines = text.split("\n")
        for kind, value, line in left:
            for n in range(line - 1, min(line + value.count("\n"), len(lines))):
                lines[n] = f"[redacted {kind}]"
        text = "\n".join(lines)
        if _credentials(text, allow):
            text = f"[redacted {', '.join(kinds)}]"
    if refuse:
        kinds += list(dict.fromkeys(kind for kind, _start, _end in privacy.find(text, refuse)))
        text = privacy.redact_text(text, refuse)[0]
    return text, kinds


def _credentials(text: str, allow: Collection[str]) -> list[tuple[str, str, int]]:
    """(kind, value, line) of each credential the ledger's screen finds in ``text`` (the
    marker on a line allows that line, as in a playbook)."""
    from scarwarden.files import secret_scan

    values: list[str] = []
    found = secret_scan.scan_text(text, None, allow, by_line=True, values=values)
    return [(f.kind, value, f.line or 1) for f, value in zip(found, values, strict=True)]


def text_of(content: Any) -> str:
    """The text of a message's content, whether a string or a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""
