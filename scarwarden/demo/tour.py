"""``scarwarden demo``: the whole loop, narrated, on a throwaway copy of the demo memory.

The tour builds the repository (:mod:`.setup`), shows the playbook and the audit of one
rule, then runs each capability's section (:mod:`.sections`) in the order of the loop:
remember -> audit -> recall -> answer -> guard -> learn -> share -> review.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from scarwarden.demo import sections
from scarwarden.demo.setup import make_demo_repo
from scarwarden.errors import UsageError
from scarwarden.files.display import style
from scarwarden.repo import MemoryRepo

Echo = Callable[[str], None]

#: Each capability contributes one section, in the order of the loop.
SECTIONS: list[tuple[str, Callable[[MemoryRepo, Echo], None]]] = [
    ("Recall and the router", sections.recall_section),
    ("Answers that cite their memory", sections.answers_section),
    ("Images against the visual rules (no model)", sections.visual_section),
    ("The provenance gate", sections.gate_section),
    ("Distillation (offline, no model)", sections.distill_section),
    ("Exports for other agents", sections.exports_section),
    ("Audit it yourself", sections.audit_section),
]


def heading(echo: Echo, title: str) -> None:
    """A section's title line: ``== Title ====...``, padded to about 64 columns."""
    echo("")
    echo(style(f"== {title} ", bold=True) + style("=" * max(3, 60 - len(title)), dim=True))


def show_memory(repo: MemoryRepo, echo: Echo) -> None:
    """The playbook of the demo memory, then the audit of PB-01 with its episodes."""
    from scarwarden.files.display import format_episode, format_rule
    from scarwarden.index import open_index

    with open_index(repo) as index:
        rules = index.rules()
        episodes = index.episode_count()
        pb01 = index.get_rule("PB-01")
        cited = [index.get_episode(e) for e in pb01.episode_ids] if pb01 else []
    heading(echo, "The memory")
    echo(
        f"A demo team's memory in a fresh git repository: {episodes} episodes "
        f"(memory/episodes/YYYY/MM/*.yaml) and {len(rules)} rules (memory/playbook.md)."
    )
    echo("Every rule cites the episodes that taught it. The playbook:")
    echo("")
    for rule in rules:
        echo(
            f"  {style(rule.id, bold=True)}  {rule.title}  "
            + style(f"[{', '.join(rule.tags)}] learnt in {len(rule.episode_ids)} episode(s)", dim=True)
        )
    if pb01 is None:
        return
    heading(echo, "The audit of one rule (scarwarden rule show PB-01)")
    echo(format_rule(pb01))
    for ep in cited:
        if ep is None:
            continue
        echo("")
        echo(style(f"--- learnt in {ep.id} (word for word) ---", fg="cyan"))
        echo(format_episode(ep))


def prepare_keep(keep: Path) -> Path:
    """Create ``keep`` and return where the demo repository will go (``keep/demo-memory``).

    A non-empty ``demo-memory`` there (a second ``demo --keep``) is refused up front,
    not after the whole tour has been printed (issue 16); nothing is overwritten.
    """
    target = keep / "demo-memory"
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise UsageError(
            f"{target} already exists and is not empty",
            hint=f"remove it (rm -rf {target}) or give --keep another folder",
        )
    try:
        keep.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create the folder {keep}: {exc.strerror}") from None
    return target


def run_demo(echo: Echo, *, keep: Path | None = None) -> Path | None:
    """Walk the whole loop on a temporary copy of the demo memory.

    With ``keep`` (an existing folder), the demo repository is copied into it at the
    end and the copy's path is returned; the temporary one is always removed.
    """
    target = None if keep is None else prepare_keep(keep)  # before anything is shown
    parent = Path(tempfile.mkdtemp(prefix="scarwarden-demo-"))
    try:
        repo = make_demo_repo(parent)
        show_memory(repo, echo)
        for title, section in SECTIONS:
            heading(echo, title)
            section(repo, echo)
        heading(echo, "Try it in your own repository")
        echo("  cd your-repo && scarwarden init          # or: scarwarden init --demo")
        echo('  scarwarden episode add --task "..." --action "..." --correction "..."')
        echo('  scarwarden distill && scarwarden recall "your next task"')
        if target is None:
            return None
        shutil.copytree(repo.root, target, symlinks=True, dirs_exist_ok=True)
        echo(f"\nKept the demo repository at {target}")
        return target
    finally:
        shutil.rmtree(parent, ignore_errors=True)
