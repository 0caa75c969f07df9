"""What the MCP server's tools and resources do, without the MCP SDK.

:class:`MemoryTools` holds one memory repository and answers every tool call with a
JSON-able dict (or, for resources, text). Failures are :class:`ScarwardenError`, the
same errors and messages as the CLI; ``mcp_server.py`` turns them into MCP tool errors.
Keeping this free of the SDK keeps it testable and importable without paying ~0.5 s
for ``import mcp``.

Recall, the writes and distillation go through the Python API (:mod:`scarwarden.api`),
as the CLI's commands do. Writes (episodes, human answers, distill commits) are
serialised twice: the API's thread lock, because the SDK runs synchronous tools in
worker threads and two calls can arrive at once, and the ledger's ``write_lock``
(``flock``), which also serialises against the CLI and other servers on the same
repository.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scarwarden.answers.cite_as import format_citation
from scarwarden.api import RECORD_FIELDS as RECORD_FIELDS  # record_episode's arguments
from scarwarden.api import Memory
from scarwarden.errors import UsageError
from scarwarden.files.display import format_episode
from scarwarden.files.episodes import Episode
from scarwarden.files.rule_ids import canonical as canonical_rule_id
from scarwarden.regular_files import read_regular_text
from scarwarden.repo import MemoryRepo

#: What an agent must do for each verdict (recall's ``instructions``).
VERDICT_STEPS = {
    "ACT": (
        "Where your answer or action follows one of the rules listed here, cite it inline "
        "exactly as given in `cite_as` ({example}). Cite only rules listed here, and only "
        "their own episodes."
    ),
    "ACT_AND_FLAG": (
        "Tell the user which rules you applied and which assumptions you made, and cite "
        "each rule you applied exactly as given in `cite_as` ({example}). If a rule does "
        "not fit the task, say so instead of following it."
    ),
    "ASK_HUMAN": (
        "Ask the human how this task should be done, then call `ask_human_answer` with the "
        "task and their answer word for word (it becomes a new episode), and then do the "
        "task as they said. `candidates` lists the nearest rules (or failed episodes), "
        "unconfirmed: never act on them; you may show them to the human, and when they say "
        "one applies, call `confirm_rule` with the task and its ID."
    ),
}
AFTER_STEPS = (
    " Before sending an answer that cites memory, you can check it with "
    "`verify_citations`. Afterwards, call `record_episode` with what you did (action), "
    "what happened (outcome) and any correction a human made, passing the rule IDs you "
    "followed as `rules_applied` and recall's `receipt` unchanged as `receipt` (it proves "
    "what you were given)."
)


def _confirm_hints() -> Any:
    """What a refused ``confirm_rule`` tells the agent, in the tools' words (the CLI's
    name commands to type: ``scarwarden recall TASK``)."""
    from scarwarden.answers.asking import ConfirmHints

    return ConfirmHints(
        malformed="confirm a rule `recall` returned or listed as a candidate, by its ID (e.g. PB-03)",
        unknown="call `recall` with the task and confirm one of the candidates it lists",
        retired="confirm an active rule; retired rules are never recalled",
        unshown="confirm a rule `recall` lists for this task; to teach something new, call "
        "`ask_human_answer` with the human's answer instead",
    )


WORKFLOW = """\
This server is Scarwarden, the team's auditable memory: rules (PB-NN) distilled from \
recorded episodes (ep-...), every rule citing the episodes that taught it.

1. Before acting on a task, call `recall` with the task in plain words.
2. Follow its `instructions`: ACT (follow the rules), ACT_AND_FLAG (act, state your \
assumptions) or ASK_HUMAN (ask a human, then `ask_human_answer`).
3. Cite every rule you apply inline, exactly `[PB-NN, learnt in ep-..., ep-...]` (recall \
gives the exact string per rule in `cite_as`). Never cite a rule recall did not return, \
nor an episode the rule does not list. `verify_citations` checks a text for you.
4. After acting, call `record_episode` (task, action, outcome, correction, tags, \
rules_applied, and recall's `receipt` unchanged: the gate proves from git which rules you \
were given). Corrections are how the memory learns.
5. To audit a rule or an episode word for word: `get_rule`, `get_episode`, or the \
resources scarwarden://playbook, scarwarden://rule/{id}, scarwarden://episode/{id}."""


class MemoryTools:
    """The tools of ``scarwarden mcp`` over one memory repository."""

    def __init__(
        self,
        repo: MemoryRepo,
        *,
        allow_distill_commit: bool = False,
        environ: Mapping[str, str] | None = None,
        sync: bool = False,
        memory: Memory | None = None,
    ) -> None:
        self.repo = repo
        self.allow_distill_commit = allow_distill_commit
        #: ``scarwarden mcp --sync``: share each write with the remote (issue 15).
        self.sync = sync
        self.environ = dict(environ or {})
        #: The Python API does every operation it covers (one path: issue 29); its lock
        #: serialises this server's writes (the SDK runs tools in worker threads).
        self.memory = memory if memory is not None else Memory(repo, environ=self.environ)

    # -- recall -------------------------------------------------------------------
    def recall(self, task: str, limit: int | None = None) -> dict[str, Any]:
        """``recall --json`` plus ``cite_as`` per rule and ``instructions`` for the verdict."""
        found = self.memory.recall(task, limit=limit)
        data = found.to_json()
        cite_as = {rule.id: rule.cite_as for rule in found.rules}
        example = next(iter(cite_as.values()), "[PB-NN, learnt in ep-...]")
        data["cite_as"] = cite_as
        data["instructions"] = (
            _verdict_meaning(found.verdict)
            + VERDICT_STEPS.get(found.verdict, VERDICT_STEPS["ACT_AND_FLAG"]).format(example=example)
            + (AFTER_STEPS if found.verdict != "ASK_HUMAN" else "")
        )
        return data

    # -- writes -------------------------------------------------------------------
    def record_episode(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        """Validate and commit one episode (like ``episode add``); return its ID, path, commit."""
        return self._synced(self.memory.record_fields(fields, source="record_episode").to_json())

    def ask_human_answer(self, task: str, answer: str) -> dict[str, Any]:
        """Record a human's answer to an ASK_HUMAN task as a new, committed episode."""
        return self._synced(self.memory.answer(task, answer).to_json())

    def confirm_rule(self, task: str, rule_id: str) -> dict[str, Any]:
        """Record a human's confirmation that a rule (a candidate) applies to the task."""
        recorded, confirmed = self.memory.confirm(task, rule_id, hints=_confirm_hints())
        return self._synced({**recorded.to_json(), "confirmed": confirmed})

    def distill(
        self, *, dry_run: bool = True, offline: bool | None = None, branch: str | None = None
    ) -> dict[str, Any]:
        """Propose (``dry_run``: by the model when it can be used, else offline, with a
        ``notice`` saying why) or commit playbook changes; committing must be allowed."""
        if not dry_run and not self.allow_distill_commit:
            raise UsageError(
                "this server may only propose distillations (dry_run=true): committing "
                "playbook changes was not allowed when it was started",
                hint="restart it as 'scarwarden mcp --allow-distill-commit' to let agents "
                "commit distillations, or run 'scarwarden distill' yourself",
            )
        return self._synced(self.memory.distill(offline=offline, dry_run=dry_run, branch=branch).data)

    def _synced(self, reply: dict[str, Any]) -> dict[str, Any]:
        """With ``--sync``, push the write to the remote (``scarwarden sync``). The write
        is committed here whatever happens; a failed sync is reported, not raised."""
        if not self.sync:
            return reply
        from scarwarden.agents.sync import sync
        from scarwarden.errors import ScarwardenError

        try:
            reply["sync"] = sync(self.repo).to_json()
        except ScarwardenError as exc:
            reply["sync"] = {"error": exc.message, "hint": exc.hint}
        return reply

    # -- audit --------------------------------------------------------------------
    def get_rule(self, rule_id: str) -> dict[str, Any]:
        """The rule, each cited episode word for word (stored YAML), its history, and how
        it has fared since it last changed (lineage counts)."""
        from scarwarden.audit.history import rule_history
        from scarwarden.index import open_index
        from scarwarden.index.lineage import lineage_counts

        typed = _required(rule_id, "rule_id")
        rule_id = canonical_rule_id(typed)
        with open_index(self.repo) as index:
            index.require_playbook()
            rule = index.get_rule(rule_id)
            if rule is None:  # issue 28: as 'rule show': any case, a title, the nearest IDs
                from scarwarden.files.rule_lookup import find_rule

                rule = index.get_rule(
                    find_rule(
                        typed,
                        [(r.id, r.title) for r in index.rules(include_retired=True)],
                        episode_hint="call get_episode with episode_id {id}",
                        list_hint="the scarwarden://playbook resource lists every rule",
                    )
                )
                assert rule is not None
            rule_id = rule.id
            episodes = []
            for ep_id in rule.episode_ids:
                ep = index.get_episode(ep_id)
                path = index.episode_path(ep_id)
                episodes.append(
                    {
                        "id": ep_id,
                        "found": ep is not None,
                        "path": path,
                        "yaml": self._stored_text(path, ep),
                        "episode": ep.to_json() if ep else None,
                    }
                )
            lineage = lineage_counts(index, [rule.id])[rule.id]
        history = [
            {"commit": ev.sha, "date": ev.date, "author": ev.author, "subject": ev.subject, "kind": ev.kind}
            for ev in rule_history(self.repo, rule_id)
        ]
        return {
            "rule": rule.to_json(),
            "cite_as": format_citation(rule.id, rule.episode_ids),
            "episodes": episodes,
            "history": history,
            "lineage": {**lineage.to_json(), "summary": lineage.sentence()},
        }

    def get_episode(self, episode_id: str) -> dict[str, Any]:
        """One episode word for word, its path, and the rules that cite it."""
        found = self.memory.episode(
            episode_id,
            missing_hint="episode IDs look like ep-7k2m9q4x1z; get_rule lists "
            "the episodes a rule was learnt in",
        )
        citing = [self.memory.rule(rule_id) for rule_id in found.cited_by]
        return {
            "episode": found.fields,
            "path": found.path,
            "yaml": self._stored_text(found.path, found.stored),
            "cited_by": [{"id": r.id, "title": r.title, "retired": r.retired} for r in citing],
        }

    def verify_citations(self, task: str, text: str) -> dict[str, Any]:
        """Check the inline citations of ``text`` against a fresh recall of ``task``."""
        from scarwarden.answers.citations import verify_in_repo
        from scarwarden.recall.engine import recall_task

        result = recall_task(self.repo, task, log=False)
        data = verify_in_repo(self.repo, text, result).to_json()
        data["task"] = result.task
        data["verdict"] = result.verdict
        data["recalled"] = {rule.id: format_citation(rule.id, rule.episode_ids) for rule in result.rules}
        return data

    def audit_image(
        self, task: str, path: str | None = None, data_base64: str | None = None
    ) -> dict[str, Any]:
        """``audit-image --json`` for an image in the repository or sent as base64 (issue 19)."""
        from scarwarden.agents.mcp.visual import audit_image_reply

        return audit_image_reply(self.repo, self.environ, task, path, data_base64)

    # -- resources ----------------------------------------------------------------
    def playbook_markdown(self) -> str:
        """``memory/playbook.md`` as it is in the working tree."""
        try:
            return read_regular_text(self.repo.playbook_path)
        except FileNotFoundError:
            raise UsageError(f"no playbook at {self.repo.playbook_rel}") from None

    def rule_markdown(self, rule_id: str) -> str:
        """One rule as markdown, followed by every episode it was learnt in (YAML)."""
        from scarwarden.answers.prompts import fence  # an episode holding ``` cannot close it

        audit = self.get_rule(rule_id)
        rule = audit["rule"]
        lines = [
            f"## {rule['id']}: {rule['title']}",
            "",
            rule["text"],
            "",
            f"- Tags: {', '.join(rule['tags'])}",
            f"- Learnt in: {', '.join(rule['episode_ids'])}",
            f"- Cite as: {audit['cite_as']}",
        ]
        if rule.get("retired"):
            lines.append(f"- Retired: {rule['reason']}")
        for ep in audit["episodes"]:
            lines += ["", f"### Learnt in {ep['id']}" + (f" ({ep['path']})" if ep["path"] else ""), ""]
            lines += (
                [fence("yaml", ep["yaml"].rstrip("\n"))]
                if ep["found"]
                else [f"{ep['id']} is not in the ledger."]
            )
        return "\n".join(lines) + "\n"

    def episode_yaml(self, episode_id: str) -> str:
        """One episode's file, word for word."""
        return str(self.get_episode(episode_id)["yaml"])

    def _stored_text(self, path: str | None, ep: Episode | None) -> str | None:
        # Word for word: the file as stored while it still holds this very episode (the
        # same rule as `rule show`), else the canonical rendering.
        return format_episode(ep, self.repo, path) + "\n" if ep is not None else None


def _required(value: str | None, name: str) -> str:
    if value is None or not str(value).strip():
        raise UsageError(f"'{name}' is empty", hint=f"give '{name}' in plain words")
    return str(value).strip()


def _verdict_meaning(verdict: str) -> str:
    from scarwarden.recall.router import VERDICT_MEANING

    meaning = VERDICT_MEANING.get(verdict)
    return f"{verdict}: {meaning.rstrip()} " if meaning else ""
