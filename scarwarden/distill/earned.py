"""Rules that keep being corrected are proposed for revision by the next distillation.

A rule corrected in at least half of at least three applications since it last changed
(:mod:`scarwarden.index.lineage`) is *struggling*. The offline distiller cannot rewrite
it without inventing words, so it flags it in the commit body; the model distiller
sends it with the corrections it received and may update, supersede or retire it.
"""

from __future__ import annotations

from scarwarden.errors import ScarwardenError, one_line
from scarwarden.files import playbook as pb
from scarwarden.index.lineage import Lineage, lineage_counts
from scarwarden.logs import log
from scarwarden.regular_files import is_refusal
from scarwarden.repo import MemoryRepo


def struggling_rules(repo: MemoryRepo, playbook: pb.Playbook) -> list[Lineage]:
    """The playbook's active rules that are struggling, in playbook order. Best effort:
    an index that cannot be opened (read-only, busy) means no proposal, not a failure."""
    from scarwarden.index import open_index

    try:
        with open_index(repo) as index:
            counts = lineage_counts(index, [rule.id for rule in playbook.rules])
    except (ScarwardenError, OSError) as exc:
        if is_refusal(exc):  # a FIFO or socket playbook: exit 2, naming it, as every command says
            raise
        reason = one_line(exc, root=str(repo.root))
        log.warning("lineage counts unavailable (%s); no rule proposed for revision", reason)
        return []
    return [counts[rule.id] for rule in playbook.rules if counts[rule.id].struggling]


def describe(lineage: Lineage) -> str:
    return f"{lineage.sentence()} (corrected in {', '.join(lineage.corrections)})"
