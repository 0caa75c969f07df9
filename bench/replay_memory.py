"""The memories the replay benchmark compares, each answering "top k texts for this task".

* ``Scarwarden``: a real memory repository driven only through the CLI
  (``python -m scarwarden ...``, ``--json``), exactly as an agent or a script would.
* ``RawEpisodes``: the same episodes, no playbook, ranked by BM25 on Scarwarden's tokens.
* ``FailuresOnly``: the failed episodes' corrections alone, ranked by the same BM25 (the
  strongest simple baseline: the lesson, nothing else).

Every memory of episodes ranks with the episodes' tags too (a tag's words are added to
the document BM25 ranks, not to the text read), as Scarwarden is given them: tags go to
every arm (the policy has no episodes, so none).
* ``PolicyRules``: policy.md split into rules (one bullet or paragraph each, with its
  section heading), ranked by the same BM25.
* no memory: nothing (what the agent had beyond the policy in its prompt).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replay_text import BM25

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Replay Bench",
    "GIT_AUTHOR_EMAIL": "replay@example.com",
    "GIT_COMMITTER_NAME": "Replay Bench",
    "GIT_COMMITTER_EMAIL": "replay@example.com",
}
EPISODE_FIELDS = ("task", "action", "outcome", "correction")


class CliError(RuntimeError):
    """A Scarwarden command failed; the message holds its stderr."""


def bench_env(offline: bool) -> dict[str, str]:
    """The environment for every subprocess: a git identity when none is set, no key offline."""
    env = dict(os.environ)
    for key, value in GIT_IDENTITY.items():
        env.setdefault(key, value)
    if offline:
        env.pop("SCARWARDEN_API_KEY", None)
        env.pop("DASHSCOPE_API_KEY", None)
    for var in ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE"):
        env.pop(var, None)
    return env


@dataclass
class Scarwarden:
    """A fresh memory repository at ``path``, used through ``python -m scarwarden``."""

    path: Path
    env: dict[str, str]
    calls: int = 0
    usage: dict[str, int] = field(default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0})

    def run(self, *args: str, stdin: str | None = None, ok: tuple[int, ...] = (0,)) -> str:
        """Run one command in the repository and return its stdout."""
        cmd = [sys.executable, "-m", "scarwarden", "-C", str(self.path), *args]
        proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=self.env)
        self.calls += 1
        if proc.returncode not in ok:
            raise CliError(f"scarwarden {' '.join(args)} exited {proc.returncode}: {proc.stderr.strip()}")
        return proc.stdout

    def init(self) -> None:
        """`git init` + `scarwarden init --hooks`: a real memory with its provenance gate."""
        self.path.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", "-b", "main", str(self.path)], check=True, env=self.env)
        self.run("init", "--hooks", "--json")

    def add(self, episode: dict[str, Any]) -> str:
        """`episode add --file -` (one commit); returns the minted ID."""
        out = json.loads(self.run("episode", "add", "--file", "-", "--json", stdin=json.dumps(episode)))
        return str(out[0]["id"])

    def distill(self, model: bool) -> dict[str, Any]:
        """`distill --json` (offline unless ``model``); records the model's tokens."""
        args = ["distill", "--json"] if model else ["distill", "--offline", "--json"]
        result: dict[str, Any] = json.loads(self.run(*args))
        usage = result.get("usage") or {}
        for key in self.usage:
            self.usage[key] += int(usage.get(key) or 0)
        return result

    def recall(self, task: str, limit: int) -> dict[str, Any]:
        """`recall --json --limit N --no-log -` with the task on stdin, as an agent calls it."""
        out: dict[str, Any] = json.loads(
            self.run("recall", "--json", "--limit", str(limit), "--no-log", "-", stdin=task)
        )
        return out

    def rules(self) -> list[dict[str, Any]]:
        """`rule list --json`: the active playbook."""
        return list(json.loads(self.run("rule", "list", "--json")))

    def episodes(self) -> list[dict[str, Any]]:
        """`episode list --json`: the whole ledger."""
        return list(json.loads(self.run("episode", "list", "--json")))


def rule_text(rule: dict[str, Any]) -> str:
    """What an agent reads of a recalled rule: its title and text, and the evidence
    recall gives with it (its closest cited episode's correction sentences)."""
    evidence = "\n".join(str(e.get("text", "")) for e in rule.get("evidence") or ())
    return f"{rule.get('title', '')}\n{rule.get('text', '')}" + (f"\n{evidence}" if evidence else "")


def candidate_texts(candidate: dict[str, Any]) -> tuple[str, str]:
    """What an agent shows the human of an ASK_HUMAN candidate, and its lesson text: a
    rule reads as a recalled rule; a failed episode as its task and its quoted
    correction sentences (the lesson text is the quote alone: no instruction)."""
    if candidate.get("kind") == "rule":
        text = rule_text(candidate)
        return text, text
    quote = "\n".join(str(e.get("text", "")) for e in candidate.get("evidence") or ())
    return f"{candidate.get('task', '')}\n{quote}".strip(), quote


def given_texts(result: dict[str, Any], top: int, candidates: bool) -> Texts:
    """What a recall gives the agent: its ``rules`` (with their evidence), and, when
    ``candidates``, the ``candidates`` of an ASK_HUMAN answer too (top ``top`` in all).
    A rule's lesson text is the text read (a rule holds no instruction or log)."""
    read = [rule_text(r) for r in (result.get("rules") or [])[:top]]
    lessons = list(read)
    if candidates:
        for candidate in (result.get("candidates") or [])[: max(0, top - len(read))]:
            text, lesson = candidate_texts(candidate)
            read.append(text)
            lessons.append(lesson)
    return Texts(read, lessons)


#: What is left of an episode once the user's instruction (``task``) and the agent's
#: action log (``action``) are stripped: the lesson text, judged for transfer.
LESSON_FIELDS = ("outcome", "correction")


def episode_text(episode: dict[str, Any]) -> str:
    """What an agent reads of a raw episode: task, action, outcome, correction."""
    return "\n".join(str(episode[k]) for k in EPISODE_FIELDS if episode.get(k))


def lesson_text(episode: dict[str, Any]) -> str:
    """The lesson an episode holds: its outcome and correction (no instruction, no log)."""
    return "\n".join(str(episode[k]) for k in LESSON_FIELDS if episode.get(k))


def tag_words(episode: dict[str, Any]) -> str:
    """An episode's tags as words (``gift-card`` -> ``gift card``), for ranking only."""
    return " ".join(str(t).replace("-", " ") for t in episode.get("tags") or ())


@dataclass
class Texts:
    """What a memory returns: the texts read (tokens) and their lesson text (judged for
    transfer: instructions and action logs stripped)."""

    read: list[str]
    lessons: list[str]


class RawEpisodes:
    """Memory without distillation: every episode so far, BM25 top k on the same tokens
    (the episode's text and its tags)."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.lessons: list[str] = []
        self.docs: list[str] = []
        self._bm25: BM25 | None = None

    def keeps(self, episode: dict[str, Any]) -> bool:
        return True

    def read(self, episode: dict[str, Any]) -> str:
        return episode_text(episode)

    def add(self, episode: dict[str, Any]) -> None:
        if not self.keeps(episode):
            return
        text = self.read(episode)
        self.texts.append(text)
        self.lessons.append(lesson_text(episode))
        self.docs.append(f"{text}\n{tag_words(episode)}")
        self._bm25 = None

    def top(self, task: str, k: int) -> Texts:
        if not self.texts:
            return Texts([], [])
        if self._bm25 is None:
            self._bm25 = BM25(self.docs)
        found = self._bm25.top(task, k)
        return Texts([self.texts[i] for i in found], [self.lessons[i] for i in found])


class FailuresOnly(RawEpisodes):
    """The failed episodes alone, ranked by BM25 over their task, correction and tags,
    and read as their correction only (what a correction says, nothing else)."""

    def keeps(self, episode: dict[str, Any]) -> bool:
        return bool(episode.get("correction"))

    def read(self, episode: dict[str, Any]) -> str:
        return str(episode["correction"])

    def add(self, episode: dict[str, Any]) -> None:
        super().add(episode)
        if self.keeps(episode):
            self.docs[-1] = f"{episode.get('task', '')}\n{self.docs[-1]}"


class NoScarwarden:
    """Stands in for Scarwarden when only the baselines are measured
    (``--baselines-only``): records nothing, recalls nothing, no CLI call."""

    calls = 0
    usage: dict[str, int] = {"prompt_tokens": 0, "completion_tokens": 0}

    def init(self) -> None:
        pass

    def add(self, episode: dict[str, Any]) -> str:
        return str(episode.get("id", ""))

    def distill(self, model: bool) -> dict[str, Any]:
        return {}

    def recall(self, task: str, limit: int) -> dict[str, Any]:
        return {"verdict": "ASK_HUMAN", "rules": []}

    def rules(self) -> list[dict[str, Any]]:
        return []


def policy_rules(policy: str) -> list[str]:
    """policy.md as rules: each top-level bullet (with its sub-bullets) or paragraph,
    prefixed with its section heading ("Cancel flight: ...")."""
    chunks: list[str] = []
    heading = ""
    for block in re.split(r"\n\s*\n", policy):
        block = block.strip()
        if not block:
            continue
        if block.startswith("#"):
            heading = block.lstrip("#").strip()
            continue
        for part in re.split(r"\n(?=- )", block):
            text = part.strip().removeprefix("- ").strip()
            if text:
                chunks.append(f"{heading}: {text}" if heading else text)
    return chunks


class PolicyRules:
    """Memory without experience: the policy's rules, BM25 top k on the same tokens."""

    def __init__(self, policy: str) -> None:
        self.texts = policy_rules(policy)
        self._bm25 = BM25(self.texts)

    def top(self, task: str, k: int) -> Texts:
        found = [self.texts[i] for i in self._bm25.top(task, k)]
        return Texts(found, found)
