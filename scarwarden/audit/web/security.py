"""What keeps the audit UI safe to run: which hosts it answers to, where a form may come
from, and the headers on every response. No Flask here, so ``serve`` can decide about
the address before the app is built.

Why each exists is in :mod:`scarwarden.audit.web.app`'s docstring (DNS rebinding,
cross-site posts, injected markup).
"""

from __future__ import annotations

import ipaddress
from typing import Protocol
from urllib.parse import parse_qsl, urlsplit

#: Host names a loopback-bound server answers to.
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})

#: No script at all: episodes are untrusted text, so injected markup must stay inert.
CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)


class Headers(Protocol):
    """A request's headers, as far as :func:`same_origin` reads them."""

    def get(self, key: str) -> str | None: ...


class ResponseHeaders(Protocol):
    """A response's headers, as far as :func:`add_security_headers` sets them."""

    def __setitem__(self, key: str, value: str) -> None: ...


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address, IPv6 with or without brackets) is loopback."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def allowed_hosts(host: str) -> set[str] | None:
    """The ``Host`` names a server listening on ``host`` answers to: the loopback names
    (and ``host`` itself) on loopback; ``None`` (any) when it listens on the network."""
    return (set(LOOPBACK_HOSTS) | {host.strip("[]")}) if is_loopback(host) else None


def host_name(netloc: str) -> str | None:
    """The host part of a ``Host`` header (no port, no brackets), if it parses."""
    try:
        return urlsplit(f"//{netloc}").hostname
    except ValueError:
        return None


def same_origin(headers: Headers, host: str) -> bool:
    """False when the request's ``Origin`` or ``Referer`` names another host.

    A browser sends ``Origin`` with every cross-site POST; ``Referer`` is the fallback.
    With neither (curl, a script) the CSRF token alone has to match.
    """
    origin = headers.get("Origin")
    if origin is not None:
        return origin != "null" and urlsplit(origin).netloc == host
    referer = headers.get("Referer")
    if referer:
        return urlsplit(referer).netloc == host
    return True


def named_here(headers: Headers, host: str) -> bool:
    """Whether the browser named this server as the request's origin (its ``Origin``,
    else its ``Referer``): not merely named no other, as :func:`same_origin` allows."""
    origin = headers.get("Origin")
    if origin is not None:
        return same_origin(headers, host)
    return bool(headers.get("Referer")) and same_origin(headers, host)


def embedded_elsewhere(headers: Headers) -> bool:
    """Whether another site's page fetched this request as part of itself (an image, a
    frame, a script, a fetch) rather than as a page to show: ``Sec-Fetch-Site`` names
    another site and ``Sec-Fetch-Dest`` is not ``document``. Browsers send both; a
    request without them (curl, a script) is not refused by this."""
    site, dest = headers.get("Sec-Fetch-Site"), headers.get("Sec-Fetch-Dest")
    return site not in (None, "same-origin", "none") and dest not in (None, "document")


def add_security_headers(headers: ResponseHeaders) -> None:
    """The headers every response carries: the CSP, no sniffing, no framing."""
    headers["Content-Security-Policy"] = CSP
    headers["X-Content-Type-Options"] = "nosniff"
    headers["Referrer-Policy"] = "same-origin"
    headers["X-Frame-Options"] = "DENY"


def path_is_utf8(wsgi_path: str) -> bool:
    """Whether a request's path (WSGI's ``PATH_INFO``: the bytes as latin-1, escapes
    already undone) is UTF-8. Werkzeug turns a bad byte into U+FFFD, so ``/episodes/%FF``
    would name an episode nobody typed."""
    try:
        wsgi_path.encode("latin-1").decode("utf-8")
    except UnicodeError:
        return False
    return True


def form_is_utf8(mimetype: str, body: bytes) -> bool:
    """Whether a form body decodes as UTF-8. Werkzeug keeps an undecodable ``%FF`` as
    the three characters ``%FF``, and turns a multipart field's bad byte into U+FFFD,
    either of which would store text the user never sent; the input policy refuses it
    instead (issue 16, docs/formats.md "Text"). No form of the UI uploads a file, so a
    multipart body is text throughout."""
    if mimetype == "multipart/form-data":
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:
            return False
        return True
    if mimetype != "application/x-www-form-urlencoded":
        return True
    try:
        # Raw bytes, then each percent-escaped value: both must be UTF-8.
        parse_qsl(body.decode("utf-8"), keep_blank_values=True, encoding="utf-8", errors="strict")
    except UnicodeDecodeError:
        return False
    return True
