"""A receipt's recall settings against the repository's committed configuration (issue 27).

A receipt names the settings recall ran with (``act_threshold``, ``floor``,
``act_tag_hits``, ``limit``) and the gate re-runs recall with them; taken as given, a
receipt claiming ``act_threshold: 0`` "proves" an ``ACT`` the repository's settings
never gave. So the routing settings must be ones this repository had: the ``recall:``
section of a committed version of ``scarwarden.yaml`` (the staged one, the history's
versions, a merge's other side), each missing key filled with a default Scarwarden
shipped, or those defaults themselves (a repository with no ``scarwarden.yaml``).
``limit`` (how many rules were returned) is the caller's choice (``recall --limit``)
and not compared. Settings only an environment variable or an uncommitted edit gave
are refused: commit the configuration first.

Cost: nothing for a receipt with the defaults; otherwise one ``cat-file --batch`` of
the configuration's staged and branch versions, and ``git log`` over its history only
when those do not hold the settings.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from scarwarden import git
from scarwarden.config import CONFIG_FILE, RecallSettings
from scarwarden.files.episodes import Episode
from scarwarden.files.receipt import Receipt
from scarwarden.gate.policy import GateProblem, problem

#: (act_threshold, floor, act_tag_hits): the routing settings a receipt is judged on.
Routing = tuple[float, float, int]

#: The routing defaults Scarwarden versions with receipts shipped (issue 13's tuning,
#: then its re-measurement); the running version's defaults are added to them.
SHIPPED: tuple[Routing, ...] = ((0.175, 0.0925, 2), (0.1825, 0.13, 2))


def routing(settings: Mapping[str, Any]) -> Routing:
    return (float(settings["act_threshold"]), float(settings["floor"]), int(settings["act_tag_hits"]))


def _defaults() -> list[Routing]:
    now = RecallSettings()
    return list(dict.fromkeys([*SHIPPED, (now.act_threshold, now.floor, now.act_tag_hits)]))


class CommittedSettings:
    """The routing settings this repository's committed configuration ever gave."""

    def __init__(self, root: Path, revs: Iterable[str], env: Mapping[str, str] | None = None) -> None:
        self.root, self.revs, self.env = root, list(revs), env
        self.known: set[Routing] = set(_defaults())
        self._read_tips = False
        self._read_history = False

    def holds(self, settings: Mapping[str, Any]) -> bool:
        """Whether ``settings`` (a receipt's) are ones this repository had."""
        wanted = routing(settings)
        if wanted in self.known:
            return True
        if not self._read_tips:
            self._read_tips = True
            specs = [f":{CONFIG_FILE}"] + [f"{r}:{CONFIG_FILE}" for r in self.revs]
            self._add(git.cat_file_batch(self.root, specs, env=self.env))
            if wanted in self.known:
                return True
        if not self._read_history:
            self._read_history = True
            revs = [r for r in self.revs if git.rev_parse(self.root, r) is not None]
            blobs = sorted(git.path_blobs(self.root, revs, CONFIG_FILE, env=self.env)) if revs else []
            self._add(git.cat_file_batch(self.root, blobs, env=self.env))
        return wanted in self.known

    def _add(self, raws: Iterable[bytes | None]) -> None:
        for raw in raws:
            if raw is not None:
                self.known.update(_routings(raw))


def _routings(raw: bytes) -> list[Routing]:
    """The routing settings one version of ``scarwarden.yaml`` gives (missing keys: each
    shipped default); none when it does not parse (the receipt is then refused)."""
    from scarwarden import yamlio
    from scarwarden.errors import ScarwardenError

    try:
        data = yamlio.load(raw, source=CONFIG_FILE)
    except ScarwardenError:
        return []
    section = data.get("recall") if isinstance(data, Mapping) else None
    if not isinstance(section, Mapping):
        return []
    out = []
    for threshold, floor, hits in _defaults():
        merged = {"act_threshold": threshold, "floor": floor, "act_tag_hits": hits, **section}
        try:
            out.append(routing(merged))
        except (TypeError, ValueError, KeyError):
            continue
    return out


def settings_unknown(path: str, episode: Episode, receipt: Receipt) -> GateProblem:
    """The problem of a receipt whose settings the configuration never gave."""
    s = receipt.settings
    return problem(
        "receipt-settings-unknown",
        f"{episode.id}'s receipt {receipt.id} claims recall settings (act_threshold "
        f"{s['act_threshold']}, floor {s['floor']}, act_tag_hits {s['act_tag_hits']}) that this "
        "repository's committed configuration never gave (scarwarden.yaml's recall: section, "
        "or the defaults)",
        file=path,
        field="recalled",
        episode=episode.id,
        hint="recall with the repository's settings and record that receipt; commit a change "
        "to recall: in scarwarden.yaml before recording receipts made with it",
    )
