"""The gate's verdict on a changed episode: refused, unless it is a valid redaction.

An existing episode may change in exactly one way (:mod:`scarwarden.files.redaction`):
its fields replaced by a stub whose ``sha256`` is the hash of the bytes it replaces,
whose other fields are unchanged, and whose act is recorded by an episode added in the
same commit. Anything else, including a stub with a wrong hash (a forged redaction),
is refused. ``check --staged`` and ``verify`` both call :func:`judge`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING

from scarwarden.config import Config
from scarwarden.errors import ValidationError
from scarwarden.files.episodes import Episode, parse_episode_bytes
from scarwarden.gate import policy as rules
from scarwarden.gate.policy import GateProblem, problem

if TYPE_CHECKING:
    from scarwarden.files import playbook as pb


def judge(
    path: str,
    old_raw: bytes | None,
    new_raw: bytes | None,
    added_ids: Collection[str],
    episodes_rel: str,
    config: Config,
) -> tuple[Episode | None, list[GateProblem]]:
    """(the stub, []) for a valid redaction; (None, [the refusal]) for anything else."""
    modified = rules.changed_episode_problem(
        "M", path, old_mode="100644", new_mode="100644", old_blob="old", new_blob="new"
    )
    if old_raw is None or new_raw is None:
        return None, [modified]
    try:
        new = parse_episode_bytes(new_raw, path, episodes_dir=episodes_rel)
    except ValidationError as exc:
        if b"\nredacted:" not in new_raw:
            return None, [modified]
        first = exc.problems[0] if exc.problems else None
        detail = f"field '{first.field}': {first.message}" if first and first.field else exc.message
        return None, [_forged(path, [f"the stub does not parse ({detail})"])]
    if new.get("redacted") is None:
        return None, [modified]
    try:
        old = parse_episode_bytes(old_raw, path, episodes_dir=episodes_rel)
    except ValidationError:
        return None, [_forged(path, ["the episode it replaces does not parse"])]
    from scarwarden.files.redaction import redaction_problems

    why = redaction_problems(old.data, old_raw, new.data, added_ids)
    if why:
        return None, [_forged(path, why)]
    from scarwarden.gate import screen

    found, _warnings = screen.episode_problems(new, path, new_raw, config)
    return (new, found) if not found else (None, found)


def _forged(path: str, why: list[str]) -> GateProblem:
    ep = rules.episode_id_of(path)
    return problem(
        "redaction-invalid",
        f"episode {ep} was modified and is not a valid redaction: {'; '.join(why)}",
        file=path,
        episode=ep,
        hint=f"an episode changes only through 'scarwarden redact {ep} --reason ...'; restore it: "
        f"git restore --source=HEAD --staged --worktree -- {path}",
    )


def evidence_warnings(
    book: pb.Playbook | None, redacted: Mapping[str, str], source: str
) -> list[GateProblem]:
    """A warning for each active rule citing a redacted episode (``redacted``: ID -> path)."""
    if book is None:
        return []
    out = []
    for rule in book.rules:
        gone = [ep for ep in rule.episode_ids if ep in redacted]
        if not gone:
            continue
        left = len(rule.episode_ids) - len(gone)
        out.append(
            problem(
                "evidence-redacted",
                f"{rule.id} cites {', '.join(gone)}: evidence redacted"
                + ("; no unredacted evidence is left" if not left else f" ({left} other citation(s) left)"),
                file=source,
                line=rule.line or None,
                rule=rule.id,
                episode=gone[0],
                hint="review the rule: re-cite it to other episodes, or retire it "
                "('scarwarden distill' proposes retiring a rule left with no evidence)",
            )
        )
    return out
