"""The gate's secret and personal-data screen: what an added episode or a playbook
change may not carry (:mod:`scarwarden.files.secret_scan`, :mod:`scarwarden.files.privacy`).

A credential is a problem (code ``secret-found``); personal data is a problem or a
warning as ``privacy:`` in ``scarwarden.yaml`` says (code ``personal-data``). Only what
a change adds is judged: the added episodes, and the playbook lines the old version
did not have, so the hook's cost follows the change.
"""

from __future__ import annotations

import re

from scarwarden.config import Config
from scarwarden.files import privacy, secret_scan
from scarwarden.files.episodes import Episode
from scarwarden.gate.policy import GateProblem, problem


def _key_line(raw: bytes | None, field: str | None) -> int | None:
    """The line of an episode's top-level ``field`` (``tags[2]`` -> ``tags``,
    ``x-deploy.hosts[0]`` -> ``x-deploy``, ``action+outcome`` -> ``action``)."""
    if raw is None or not field:
        return None
    key = re.split(r"[.\[+<]", field, maxsplit=1)[0].encode()
    if not key:
        return None
    for number, line in enumerate(raw.split(b"\n"), 1):
        if line.startswith(key + b":"):
            return number
    return None


def episode_problems(
    episode: Episode, path: str, raw: bytes | None, config: Config
) -> tuple[list[GateProblem], list[GateProblem]]:
    """(problems, warnings) for one added episode."""
    problems: list[GateProblem] = []
    warnings: list[GateProblem] = []
    for found in secret_scan.scan_mapping(episode.data, config.secrets.allow):
        problems.append(
            problem(
                "secret-found",
                secret_scan.describe(found),
                file=path,
                line=_key_line(raw, found.field),
                field=found.field,
                hint=secret_scan.hint(found) + _AMEND,
                episode=episode.id,
            )
        )
    for action, out in (("refuse", problems), ("warn", warnings)):
        for found in privacy.scan_mapping(episode.data, config.privacy.kinds(action)):
            out.append(
                problem(
                    "personal-data",
                    f"holds personal data: {found.label} (privacy.{found.kind}: {action} in scarwarden.yaml)",
                    file=path,
                    line=_key_line(raw, found.field),
                    field=found.field,
                    hint="record it with 'scarwarden episode add --redact-pii' (typed placeholders), "
                    "or take it out",
                    episode=episode.id,
                )
            )
    return problems, warnings


_AMEND = "; an episode already committed: 'scarwarden redact <id> --reason ...'"


def playbook_problems(
    new_text: str | None, old_text: str | None, path: str, config: Config
) -> list[GateProblem]:
    """A credential on a playbook line this change adds (a line holding the marker is allowed)."""
    if not new_text:
        return []
    text = secret_scan.added_lines(new_text, old_text)
    return [
        problem(
            "secret-found",
            secret_scan.describe(found),
            file=path,
            line=found.line,
            hint=secret_scan.hint(found, where="line"),
        )
        for found in secret_scan.scan_text(text, None, config.secrets.allow, by_line=True)
    ]
