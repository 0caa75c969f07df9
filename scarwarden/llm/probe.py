"""``scarwarden models --test``: is the configured server reachable, is the key accepted,
does it serve the models the settings name?

One ``GET {base_url}/models`` answers all three on most OpenAI-compatible servers
(OpenAI, OpenRouter, DashScope, Ollama, vLLM, LM Studio). Where the listing is missing
(HTTP 404) or not a list, each model gets one chat completion of one token instead: the
answer 200 / 404 / 401 says the same thing, at the cost of a few tokens.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from scarwarden.config import Config
from scarwarden.errors import ExitCode, ModelError
from scarwarden.llm.endpoint import shown_url
from scarwarden.llm.reply import post, read_body, shown, within

#: Seconds to wait for the probe's answers: a check should be quick to say "no".
PROBE_TIMEOUT = 15.0


@dataclass(frozen=True)
class Check:
    name: str  # "reachable", "key", "model distill_model"...
    ok: bool | None  # None: a warning (the vision model: only audit-image needs it)
    detail: str
    #: A failure the server may not repeat (HTTP 408, 429, 5xx): exit 3, as the client's
    #: retries ending on one, not 5.
    transient: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"check": self.name, "ok": self.ok, "detail": self.detail}


@dataclass
class ProbeReport:
    base_url: str
    provider: str
    checks: list[Check] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        # None is a warning (a vision model not served), not a failure.
        return not any(c.ok is False for c in self.checks)

    @property
    def exit_code(self) -> ExitCode:
        """3 unreachable (or busy, failing: HTTP 408, 429, 5xx), 4 no key, 5 key refused
        or a model missing, 0 all good."""
        failed = next((c for c in self.checks if c.ok is False), None)
        if failed is None:
            return ExitCode.OK
        if failed.name == "reachable" or failed.transient:
            return ExitCode.MODEL_UNREACHABLE
        if failed.name == "key" and failed.detail.startswith("not set"):
            return ExitCode.NO_MODEL
        return ExitCode.MODEL_ERROR

    def to_json(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "base_url": self.base_url,
            "ok": self.ok,
            "checks": [c.to_json() for c in self.checks],
        }


def probe(config: Config, environ: Mapping[str, str], session: Any = None) -> ProbeReport:
    """Contact the configured server; never raises for what the server says."""
    import requests

    settings = config.model
    provider = settings.provider or "(none: the defaults)"
    if config.provider_from:
        provider += f", chosen by {config.provider_from}"
    report = ProbeReport(shown_url(settings.base_url), provider)  # never its password
    key = config.api_key(environ) or ""
    if not key and config.needs_key():
        # Issue 28: no key, no connection: a test of a key that is not there says so
        # (exit 4) without telling a server anything.
        stray = config.stray_key(environ)
        if config.endpoint_set:
            detail = f"not set: export SCARWARDEN_API_KEY or {config.key_env()}"
        else:  # nothing configured: any provider's own key picks that provider
            detail = (
                f"not set: export {config.key_env()} (or OPENAI_API_KEY...: scarwarden models lists them)"
            )
        report.checks.append(Check("key", False, detail + (f"; {stray}" if stray else "")))
        return report
    session = session or requests.Session()
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    base = settings.base_url.rstrip("/")
    timeout = min(settings.timeout, PROBE_TIMEOUT)
    deadline = time.monotonic() + timeout
    try:
        listing = within(timeout, session.get, f"{base}/models", headers=headers, timeout=timeout)
    except requests.RequestException as exc:
        report.checks.append(Check("reachable", False, _connect_problem(exc, timeout)))
        return report
    unread = _read(listing, deadline, timeout)  # a reply in dribs: no longer than timeout
    if unread is not None:
        report.checks.append(Check("reachable", False, unread))
        return report
    reached = f"HTTP {listing.status_code} from GET {report.base_url.rstrip('/')}/models"
    report.checks.append(Check("reachable", True, reached))
    if 300 <= listing.status_code < 400:  # as the client: not followed, the key stays here
        report.checks.append(Check("base_url", False, _redirect(listing, "GET /models", headers)))
        return report
    if listing.status_code in (401, 403):
        report.checks.append(Check("key", False, f"refused (HTTP {listing.status_code})"))
        return report
    report.checks.append(Check("key", True, "accepted" if key else "none needed (a local server)"))
    served = _listed_models(listing)
    roles = {"distill_model": settings.distill_model, "answer_model": settings.answer_model}
    for role, model in roles.items():
        report.checks.append(_model_check(role, model, served, session, base, headers, timeout))
    if settings.vision_model:
        report.checks.append(_vision_check(settings.vision_model, served, session, base, headers, timeout))
    return report


def _vision_check(
    model: str, served: set[str] | None, session: Any, base: str, headers: dict[str, str], timeout: float
) -> Check:
    """The vision model (issue 19): only ``audit-image`` needs it, so one the server does
    not serve is a warning (``ok`` None), never a failed test of distill and answer."""
    check = _model_check("vision_model", model, served, session, base, headers, timeout)
    if check.ok:
        return check
    return Check(check.name, None, f"{check.detail}; only audit-image needs it (docs/models.md)")


def _connect_problem(exc: Exception, timeout: float) -> str:
    import requests

    if isinstance(exc, (requests.exceptions.MissingSchema, requests.exceptions.InvalidSchema)):
        return "model.base_url is not an http(s) URL"
    if isinstance(exc, requests.Timeout):
        return f"no answer within {timeout:g} s"
    return f"cannot connect ({type(exc).__name__})"


def _read(response: Any, deadline: float, timeout: float) -> str | None:
    """:func:`read_body`, its refusal of an oversized reply a problem like the others
    (the probe never raises for what the server says)."""
    try:
        return read_body(response, deadline, timeout)
    except ModelError as exc:
        return exc.message


def _redirect(response: Any, what: str, headers: dict[str, str]) -> str:
    where = response.headers.get("Location") or ""
    key = headers.get("Authorization", "").removeprefix("Bearer ")
    if key:  # a server may echo what it was sent
        where = where.replace(key, "***")
    where = shown(where)
    return (
        f"{what}: HTTP {response.status_code}, a redirect to {where[:300] or 'nowhere'}, not followed "
        "(distill and answer follow none): set model.base_url to it if that is the server meant"
    )


def _listed_models(response: Any) -> set[str] | None:
    """The model IDs of an OpenAI ``/models`` listing, or None when there is none."""
    if response.status_code != 200:
        return None
    try:
        data = response.json()["data"]
        return {str(item["id"]) for item in data}
    except (ValueError, KeyError, TypeError, RecursionError):
        return None


def _model_check(
    role: str,
    model: str,
    served: set[str] | None,
    session: Any,
    base: str,
    headers: dict[str, str],
    timeout: float,
) -> Check:
    name = f"model.{role}"
    if served is not None:
        if model in served:
            return Check(name, True, f"{model} is served")
        return Check(name, False, f"{model} is not among the {len(served)} models the server lists")
    # No listing: one token of a real completion says whether the model exists.
    import requests

    body = {"model": model, "messages": [{"role": "user", "content": "ping"}], "max_tokens": 1}
    deadline = time.monotonic() + timeout
    try:
        reply = post(session, f"{base}/chat/completions", body, headers, timeout)
    except requests.RequestException as exc:
        return Check(name, False, _connect_problem(exc, timeout))
    unread = _read(reply, deadline, timeout)
    if unread is not None:
        return Check(name, False, unread)
    if reply.status_code == 200:
        return Check(name, True, f"{model} answered a one-token completion")
    if 300 <= reply.status_code < 400:
        return Check(name, False, f"{model}: {_redirect(reply, 'POST /chat/completions', headers)}")
    if reply.status_code == 404:
        return Check(name, False, f"{model}: HTTP 404, the server does not serve it")
    if reply.status_code in (401, 403):
        return Check(name, False, f"{model}: the key was refused (HTTP {reply.status_code})")
    if reply.status_code in (408, 429) or reply.status_code >= 500:
        busy = f"{model}: HTTP {reply.status_code}, the server is busy or failing: test again later"
        return Check(name, False, busy, transient=True)
    return Check(name, False, f"{model}: HTTP {reply.status_code}")
