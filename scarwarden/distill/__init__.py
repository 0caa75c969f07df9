"""Distillation: new episodes -> cited playbook changes -> one reviewable commit.

    result = distill(repo)                      # model if a key is set, else offline
    result = distill(repo, offline=True, dry_run=True)
    result = distill(repo, branch="distill/review")

:mod:`.run` holds :func:`distill`, :mod:`.result` what it returns; the steps, each in its own module:

1. :mod:`.state`: the ledger at HEAD and which of its episodes are already distilled;
2. :mod:`.offline` or :mod:`.model`: delta operations (add / update / retire);
3. :mod:`.ops`: the provenance gate, in code, applying only what the ledger supports;
4. :mod:`.commit`: the message (changes, drops, trailers) and the commit, made only
   when the tree about to be committed passes :func:`scarwarden.gate.check.check_staged`.

Nothing is written until every model call has succeeded and the gate has run, so a
failure at any point leaves the repository exactly as it was.
"""

from __future__ import annotations

from scarwarden.distill.result import DistillResult
from scarwarden.distill.run import NO_KEY_NOTICE, commit_preview, distill, preview

__all__ = ["NO_KEY_NOTICE", "DistillResult", "commit_preview", "distill", "preview"]
