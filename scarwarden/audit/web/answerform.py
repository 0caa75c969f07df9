"""An answer the ledger refuses, shown again in its form: the refusal above it and the
text the human typed in it (an error page lost it), less what may never be sent back.

A credential is never echoed in clear: the scanner reads text normalised (zero-width
characters dropped, look-alike letters mapped, base64 decoded), so where it matched
cannot be mapped back to the typed characters with certainty; the line holding it is
the smallest part taken out for sure. Each line the scanner refuses alone is replaced
by :data:`SECRET_LINE`, and the text is scanned again: a credential no line holds alone
(a key across lines) leaves nothing of the answer shown. Personal data ``privacy:``
refuses is replaced by its typed placeholder (``[email]``), as ``--redact-pii`` records
it; a control character, invisible in a text box and refused there again, is taken out.
Each is said above the form, which is sent only when the human sends it.
"""

from __future__ import annotations

import secrets
from typing import Any

from flask import Response, request

from scarwarden.characters import REFUSED
from scarwarden.repo import MemoryRepo

#: What stands in the text shown again for a line that held a credential.
SECRET_LINE = "[a line holding a secret was taken out here]"  # noqa: S105 (not a password)


def refused_answer(site: Any, repo: MemoryRepo, exc: Any) -> Response:
    """The 400 for an answer recording refused (``exc``): its problems, then the form
    again (its token, task and receipt or form ID) holding the kept text; nothing was
    written."""
    # Each problem's hint, but where the note above the form says what was taken out.
    noted = kept_text(repo, request.form.get("answer", "").replace("\r\n", "\n"))[1] is not None
    problems = "".join(
        f"\n{_where(p.field)}{p.message}" + (f"\n  hint: {p.hint}" if p.hint and not noted else "")
        for p in exc.problems
    )
    written = "" if "nothing was written" in exc.message else "\nNothing was written."
    return _again(site, repo, 400, "Cannot record this answer", exc.message + problems + written, exc.hint)


def stale_answer(site: Any, repo: MemoryRepo) -> Response:
    """The 403 for an answer sent from this server's address with a token not this
    process's (a page shown before the server restarted): the form again, with this
    server's token and the text typed. Only when the browser named this server as the
    form's origin: from another site the text is never echoed into a form to send."""
    return _again(
        site,
        repo,
        403,
        "This page is older than the server",
        "The form came from this server's address, but with a token this server did not make "
        "(the server restarted since the page was shown, or the form was made by hand); "
        "nothing was written.",
        "check the answer below, then send it again",
    )


def held_up(site: Any, repo: MemoryRepo, exc: Exception) -> Response:
    """The 503 for an answer git's index lock held up (an earlier write must be finished
    first, which needs the lock), as the site's page for it, with the form again; any
    other git failure is raised again for the site's error page."""
    from scarwarden.files import write_journal

    waiting = write_journal.index_waiting(repo)
    if waiting is None:
        raise exc
    message = f"An earlier write is not finished: {waiting}; nothing was written."
    hint = "once the lock is gone, send the answer again"
    return _again(site, repo, 503, "Git's index is locked", message, hint)


def unusable_receipt(site: Any, repo: MemoryRepo, message: str, hint: str) -> Response:
    """The 400 for an answer whose form's receipt the page cannot use (not in the recall
    log: the index deleted since; another task's recall: a stale form): the form again
    without it, as a task page opened by its address sends none, or recall the task again."""
    hint = f"send the answer below without that receipt, or {hint}"
    return _again(site, repo, 400, "Cannot record this answer", message, hint, keep_receipt=False)


def _again(
    site: Any,
    repo: MemoryRepo,
    status: int,
    heading: str,
    message: str,
    hint: str | None,
    *,
    keep_receipt: bool = True,
) -> Any:
    """The answer page: ``message`` and ``hint`` above the form holding the kept text
    (and its receipt, unless ``keep_receipt`` is false)."""
    typed = request.form.get("answer", "").replace("\r\n", "\n")
    answer, taken_out = kept_text(repo, typed)
    return site.page(
        "answer.html",
        status,
        title=heading,
        code=status,
        heading=heading,
        message=message,
        hint=None if taken_out else hint,
        task=request.form.get("task", "").replace("\r\n", "\n").strip(),
        receipt=(request.form.get("receipt") or None) if keep_receipt else None,
        form_id=request.form.get("form") or secrets.token_urlsafe(16),
        answer=answer,
        taken_out=taken_out,
    )


def kept_text(repo: MemoryRepo, typed: str) -> tuple[str, str | None]:
    """``typed`` as it may be shown again, and what was taken out of it (``None``:
    nothing)."""
    from scarwarden.files import privacy, secret_scan

    said = []
    allow = repo.config.secrets.allow
    kept = typed
    if secret_scan.scan_text(typed, "correction", allow):
        lines = typed.split("\n")
        kept = "\n".join(SECRET_LINE if secret_scan.scan_text(line, None, allow) else line for line in lines)
        if secret_scan.scan_text(kept, "correction", allow):
            return "", (
                "Your answer is not shown again: it holds a secret (a credential), which is never "
                "sent back, and no single line holds it all. Type the answer again without the "
                "credential (rotate it if it is real)."
            )
        said.append(
            f"each line holding a secret now reads {SECRET_LINE!r}: a secret is never sent back "
            "(rotate it if it is real; a known false positive: write the line again with "
            f"'{secret_scan.ALLOW_MARKER}' in the answer)"
        )
    refused = repo.config.privacy.kinds("refuse")
    kept, count = privacy.redact_text(kept, refused) if refused else (kept, 0)
    if count:
        kinds = ", ".join(f"[{kind}]" for kind in refused)
        said.append(
            f"the personal data privacy: refuses now reads as its kind ({kinds}), a typed "
            "placeholder: send it so, or say it another way"
        )
    if REFUSED.search(kept):
        kept = REFUSED.sub("", kept)
        said.append("the control characters (invisible here) were taken out")
    if not said:
        return kept, None
    return kept, "In your answer below, " + "; ".join(said) + ". Check it, then send it again."


def _where(field: str | None) -> str:
    """A problem's field in the form's words: the ledger's name an episode never written."""
    named = {"correction": "your answer", "task": "the task"}
    return f"{named.get(field or '', f'field {field!r}')}: " if field else ""
