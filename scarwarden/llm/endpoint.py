"""How a model endpoint's address is shown: never with its password.

``model.base_url`` (or ``SCARWARDEN_BASE_URL``) may hold a credential, as
``https://bob:s3cret@llm.internal/v1`` for a gateway that asks for one. Every message,
listing and page that names the address shows :func:`shown_url` instead:
``https://bob:***@llm.internal/v1`` (a user name alone, which may be a token, as
``***@``). The address itself is used as it is, for the requests only.
"""

from __future__ import annotations


def shown_url(url: str) -> str:
    """``url`` with the password of its user part replaced by ``***``.

    The user part ends at the last ``@`` before the first ``/`` after the scheme: a
    password holding ``#`` or ``?`` unescaped (which no URL parser reads as one) is
    hidden whole all the same.
    """
    scheme, sep, rest = url.partition("://")
    if not sep:  # no scheme ("bob:pw@host/v1"): the whole text is the address
        scheme, rest = "", url
    authority, slash, path = rest.partition("/")
    user_part, at, host = authority.rpartition("@")
    if not at:
        return url
    user, colon, _password = user_part.partition(":")
    shown = f"{user}:***@" if colon else "***@"
    return f"{scheme}{sep}{shown}{host}{slash}{path}"
