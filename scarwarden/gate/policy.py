"""The rules of the provenance gate, independent of where the files come from.

:mod:`scarwarden.gate.check` (the index, one tree) and :mod:`scarwarden.gate.verify` (every commit
of a history) feed these functions blobs and changes read from git; the verdicts and
their messages live here, so the hook, CI and ``verify`` can never disagree.

Every rejection is a :class:`GateProblem` with a stable ``code`` (for ``--json``), the
file and line where there is one, the rule or episode concerned, and a hint.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from scarwarden.errors import Problem, ValidationError
from scarwarden.files.episodes import Episode, parse_episode_bytes
from scarwarden.files.rule_ids import RULE_ID_PATTERN, mint_rule_id
from scarwarden.records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from scarwarden.files import playbook as pb

#: Files git may keep in an empty episodes folder; anything else must be an episode.
ALLOWED_NON_EPISODES = frozenset({".gitkeep"})
#: Regular files only: a symlink could point outside the ledger, a submodule is not a file.
REGULAR_MODES = frozenset({"100644", "100755"})
ZERO_BLOB = "0" * 40

_HEADING = re.compile(rf"^(##|###) ({RULE_ID_PATTERN}):")
_DUPLICATE = re.compile(rf"duplicate rule ID ({RULE_ID_PATTERN})")


@record(frozen=True)
class GateProblem(Problem):
    """A :class:`Problem` the gate found, with what it is about."""

    #: Stable identifier of the check, e.g. ``episode-modified``, ``citation-missing``.
    code: str = ""
    rule: str | None = None
    episode: str | None = None
    #: The commit the problem was found in (range checks and ``verify``).
    commit: str | None = None

    def __str__(self) -> str:
        text = super().__str__()
        return f"[{self.commit[:10]}] {text}" if self.commit else text

    def to_json(self) -> dict[str, object]:
        data = super().to_json()
        data.update(code=self.code, rule=self.rule, episode=self.episode, commit=self.commit)
        return data


def problem(
    code: str,
    message: str,
    *,
    file: str | None = None,
    line: int | None = None,
    field: str | None = None,
    hint: str | None = None,
    rule: str | None = None,
    episode: str | None = None,
    commit: str | None = None,
) -> GateProblem:
    return GateProblem(message, file, line, field, hint, code, rule, episode, commit)


def episode_id_of(path: str) -> str | None:
    """The ID an episode path claims (its file name), if it looks like an episode."""
    name = path.rsplit("/", 1)[-1]  # not PurePosixPath: check --all calls this 100k times
    return name[:-5] if name.endswith(".yaml") else None


def is_under(path: str, folder: str) -> bool:
    return path.startswith(folder.rstrip("/") + "/")


# -- episodes -------------------------------------------------------------------------


def changed_episode_problem(
    status: str,
    path: str,
    *,
    old_mode: str = "",
    new_mode: str = "",
    old_blob: str = "",
    new_blob: str = "",
    new_path: str | None = None,
) -> GateProblem:
    """The append-only rejection for one change to an existing episode file."""
    ep = episode_id_of(path)
    what = f"episode {ep}" if ep else f"{path.rpartition('/')[2]} (not an episode)"  # .gitkeep
    restore = f"restore it: git restore --source=HEAD --staged --worktree -- {path}"
    if status == "D":
        return problem(
            "episode-deleted",
            f"{what} was deleted; the ledger is append-only",
            file=path,
            episode=ep,
            hint=restore,
        )
    if status == "R":
        return problem(
            "episode-renamed",
            f"{what} was renamed to {new_path}; the ledger is append-only",
            file=path,
            episode=ep,
            hint=f"move it back: git mv {new_path} {path} (an episode's path follows "
            "from its ID and date and never changes)",
        )
    if status == "T" or new_mode not in REGULAR_MODES:
        return problem(
            "episode-type-changed",
            f"{what} changed type (mode {old_mode} -> {new_mode}); the ledger is append-only",
            file=path,
            episode=ep,
            hint=restore,
        )
    if old_blob == new_blob and old_mode != new_mode:
        flip = "-x" if new_mode == "100755" else "+x"
        return problem(
            "episode-mode-changed",
            f"{what} changed mode {old_mode} -> {new_mode}; the ledger is append-only",
            file=path,
            episode=ep,
            hint=f"undo it: git update-index --chmod={flip} -- {path} (and chmod {flip} {path})",
        )
    return problem(
        "episode-modified",
        f"{what} was modified; the ledger is append-only",
        file=path,
        episode=ep,
        hint=f"{restore}; then record a new episode that refs {ep} instead" if ep else restore,
    )


def added_path_problem(path: str, mode: str, episodes_rel: str) -> GateProblem | None:
    """Reject a new file in the episodes folder that cannot be an episode at all."""
    parts = path.split("/")
    if ".." in parts or path.startswith("/") or "\\" in path:
        return problem(
            "episode-unsafe-path",
            "an episode path may not contain '..', '\\' or start with '/'",
            file=path,
            hint=f"episodes live in {episodes_rel}/YYYY/MM/<id>.yaml",
        )
    name = parts[-1]
    if name in ALLOWED_NON_EPISODES:
        return None
    if mode not in REGULAR_MODES:
        kind = "a symlink" if mode == "120000" else "a submodule" if mode == "160000" else f"mode {mode}"
        return problem(
            "episode-unsafe-path",
            f"{kind} in the episodes folder; only plain episode files belong there",
            file=path,
            episode=episode_id_of(path),
            hint="commit the episode's YAML itself, not a link to it",
        )
    if not name.endswith(".yaml"):
        return problem(
            "episode-not-yaml",
            "only episode files (<id>.yaml) belong in the episodes folder",
            file=path,
            hint=f"move it out of {episodes_rel}/ (notes can live next to memory/)",
        )
    return None


def playbook_mode_problem(path: str, mode: str, status: str = "M") -> GateProblem | None:
    """A playbook that is a symlink or a submodule (its blob is no playbook text)."""
    if status == "D" or mode in REGULAR_MODES:
        return None
    kind = {"120000": "a symlink", "160000": "a submodule", "040000": "a folder"}.get(mode, f"mode {mode}")
    return problem(
        "playbook-not-a-file",
        f"{kind} where the playbook should be; it must be a plain file",
        file=path,
        hint=f"put the playbook's text there as a plain file: git rm -r --cached {path}, "
        f"write the file, then git add {path}",
    )


def validate_episode(
    raw: bytes | None, path: str, episodes_rel: str
) -> tuple[Episode | None, list[GateProblem]]:
    """Run THE episode validator on an added file; every problem it finds, as gate problems."""
    ep = episode_id_of(path)
    if raw is None:
        return None, [
            problem(
                "episode-invalid",
                "the staged blob could not be read",
                file=path,
                episode=ep,
                hint="run 'git fsck' and stage the file again",
            )
        ]
    try:
        return parse_episode_bytes(raw, path, episodes_dir=episodes_rel), []
    except ValidationError as exc:
        found = exc.problems or [Problem(exc.message, file=path)]
        return None, [
            problem(
                "episode-invalid",
                p.message,
                file=p.file or path,
                line=p.line,
                field=p.field,
                hint=p.hint,
                episode=ep,
            )
            for p in found
        ]


def duplicate_id_problem(ep_id: str, path: str, other: str) -> GateProblem:
    return problem(
        "episode-duplicate-id",
        f"episode ID {ep_id} is already used by {other}",
        file=path,
        episode=ep_id,
        hint="episode IDs are unique; record it with 'scarwarden episode add' "
        "(it mints a fresh ID) or drop this copy",
    )


# -- the playbook ---------------------------------------------------------------------


def _headings(text: str) -> dict[str, list[tuple[int, bool]]]:
    """Rule ID -> [(line, under '## Retired')], from the headings alone."""
    from scarwarden.files import playbook as pb  # the playbook's module: only when it changed

    found: dict[str, list[tuple[int, bool]]] = {}
    retired = False
    for number, line in enumerate(text.split("\n"), 1):
        if line.rstrip() == pb.RETIRED_HEADING:
            retired = True
            continue
        match = _HEADING.match(line)
        if match:
            found.setdefault(match.group(2), []).append((number, retired))
    return found


def unreadable_playbook_problem(source: str, blob: str) -> GateProblem:
    """A playbook blob git names but cannot read (a corrupt or partial clone): no
    playbook is not the same as a playbook nobody can see."""
    return problem(
        "playbook-unreadable",
        f"the playbook's blob {blob[:10]} cannot be read: it is missing from this repository",
        file=source,
        hint="run 'git fsck'; fetch the history again from a clone that has it (git fetch)",
    )


def parse_playbook(raw: bytes | None, source: str) -> tuple[pb.Playbook | None, list[GateProblem]]:
    """Parse a playbook blob; the problems carry lines and say which rule they concern."""
    from scarwarden.files import playbook as pb  # ~4 ms of start-up an episode's commit never needs

    if raw is None:
        return pb.empty(), []
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        return None, [
            problem(
                "playbook-invalid",
                "the playbook is not valid UTF-8",
                file=source,
                line=line,
                hint="save it as UTF-8",
            )
        ]
    try:
        return pb.parse(text, source=source), []
    except ValidationError as exc:
        headings = _headings(text)
        out = []
        for p in exc.problems or [Problem(exc.message, file=source)]:
            dup = _DUPLICATE.search(p.message)
            rule = dup.group(1) if dup else _rule_in(p.message)
            code = "playbook-invalid"
            message = p.message
            hint = p.hint
            if dup:
                code = "rule-id-duplicate"
                places = headings.get(rule or "", [])
                if any(r for _, r in places) and any(not r for _, r in places):
                    code = "rule-id-reused"
                    lines = ", ".join(f"{'retired' if r else 'active'} at line {n}" for n, r in places)
                    message = f"rule ID {rule} is retired and used again ({lines})"
                    hint = "retired IDs are never reused; give the new rule a new ID"
            out.append(
                problem(
                    code, message, file=p.file or source, line=p.line, field=p.field, hint=hint, rule=rule
                )
            )
        return None, out


def _rule_in(message: str) -> str | None:
    match = re.match(rf"({RULE_ID_PATTERN})\b", message)
    return match.group(1) if match else None


def compare_playbooks(old: pb.Playbook | None, new: pb.Playbook, source: str) -> list[GateProblem]:
    """Rule-ID lifecycle between two versions: nothing dropped, nothing un-retired."""
    if old is None:
        return []
    out = []
    new_ids = new.all_ids()
    for rule in old.all_rules():
        if rule.id not in new_ids:
            out.append(
                problem(
                    "rule-removed",
                    f"{rule.id} ({rule.title}) was removed; rule IDs stay on record",
                    file=source,
                    rule=rule.id,
                    hint=f"move {rule.id} under '## Retired' as '### {rule.id}: ...' with "
                    "'- Retired: <reason>' instead of deleting it",
                )
            )
    old_retired = {r.id for r in old.retired}
    for rule in new.rules:
        if rule.id in old_retired:
            out.append(
                problem(
                    "rule-id-reused",
                    f"{rule.id} is retired and is back as an active rule",
                    file=source,
                    line=rule.line,
                    rule=rule.id,
                    hint=f"retired IDs are never reused: give it a new ID "
                    f"(for instance {_next_free(old, new)}) and keep {rule.id} under '## Retired'",
                )
            )
    return out


def _next_free(*books: pb.Playbook) -> str:
    taken = {rule_id for book in books for rule_id in book.all_ids()}
    return mint_rule_id(taken)


def rules_to_resolve(
    old: pb.Playbook | None, new: pb.Playbook, lost_ids: Iterable[str] = ()
) -> list[pb.Rule]:
    """Rules whose citations must be (re)checked: new or re-cited since ``old``, or
    citing an episode that left the tree. Unchanged rules were checked when they
    changed (``verify`` proves that for the whole history)."""
    lost = set(lost_ids)
    if old is None:
        return list(new.all_rules())
    before = {r.id: r.episode_ids for r in old.all_rules()}
    return [
        r for r in new.all_rules() if before.get(r.id) != r.episode_ids or lost.intersection(r.episode_ids)
    ]


def learnt_in_line(text: str | None, rule: pb.Rule) -> int | None:
    """The line of a rule's '- Learnt in:' field (the heading's when not found)."""
    from scarwarden.files import playbook as pb

    if not text or not rule.line:
        return rule.line or None
    lines = text.split("\n")
    for number in range(rule.line, min(len(lines), rule.line + 400)):
        line = lines[number]
        if line.startswith("- Learnt in:"):
            return number + 1
        if pb.HEADING_RE.match(line):  # the next rule; "#launchday" is text, not a heading
            break
    return rule.line


def citation_problem(
    rule: pb.Rule, ep_id: str, source: str, line: int | None, where: str, hint: str | None = None
) -> GateProblem:
    return problem(
        "citation-missing",
        f"{rule.id} cites {ep_id}, which is not an episode in {where}",
        file=source,
        line=line,
        field="Learnt in",
        rule=rule.id,
        episode=ep_id,
        hint=hint
        or "no provenance, no rule: cite an episode that exists, or record the "
        "episode first ('scarwarden episode add') and commit it with the rule",
    )
