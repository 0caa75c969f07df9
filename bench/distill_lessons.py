"""Does distillation keep what each correction teaches? (issue 12; run by distill_bench.py)

A generated ledger whose expected playbook is known: 24 topics, each an area and a
thing (``webinar``/``timezone``...), corrected on three days:

* day 1: "Always mention the timezone in webinar messages" (or, for a third of the
  topics, a limit: "Use at most two timezones in webinar messages");
* day 2: a refinement: "Mention the registration date in webinar messages too";
* day 3, for two topics in three: a reversal by the same reviewer: "Never mention the
  timezone in webinar messages" / "Use no timezones at all in webinar messages".

Expected: every lesson not reversed later is in the text of an active rule; for every
reversal, the later lesson is there and the earlier one is not; no active rule cites an
episode that contradicts its text without a flag. Measured for the offline distiller
and for the model distiller against the fake server replaying the ideal answers
(scripted from the ground truth; this measures the pipeline, gate and citation checks,
not a model), each with one distillation per day ("staged") and one for all three days.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fakellm import FakeLLM, reply_json

from scarwarden.config import ModelSettings
from scarwarden.distill import distill
from scarwarden.files import playbook as pb
from scarwarden.files.claims import as_sentence
from scarwarden.files.record import add_episodes
from scarwarden.files.scaffold import init
from scarwarden.llm.client import ChatClient
from scarwarden.repo import MemoryRepo, open_repo

AREAS = (
    "webinar newsletter invoice refund linkedin blog release incident gdpr onboarding podcast survey "
    "pricing partner hiring event support security roadmap community forum wiki census audit"
).split()
THINGS = (
    "timezone budget deadline owner discount hashtag emoji agenda link signature logo quote chart "
    "sponsor badge footnote attachment banner hotline checklist glossary mascot slogan warranty"
).split()
DETAILS = (
    "registration renewal review launch payment expiry approval kickoff publication closing "
    "delivery retro signup cutoff booking freeze rollout migration meetup survey filing archive "
    "census handover"
).split()


@dataclass
class Topic:
    area: str
    thing: str
    detail: str
    kind: str  # "refine", "polarity" or "limit"
    variant: int = 0
    episodes: dict[str, str] = field(default_factory=dict)  # "L1".."L3" -> episode ID

    @property
    def title(self) -> str:
        return f"{self.area.capitalize()} {self.thing}"

    def lessons(self) -> dict[str, str]:
        """The three days' corrections, in one of several wordings (``variant``)."""
        a, t, d, v = self.area, self.thing, self.detail, self.variant
        if self.kind == "limit":
            first = (f"Use at most two {t}s in {a} messages", f"No more than three {t}s in {a} messages")[
                v % 2
            ]
        else:
            first = (f"Always mention the {t} in {a} messages", f"Mention the {t} in every {a} message")[
                v % 2
            ]
        second = (f"Mention the {d} date in {a} messages too", f"Give the {d} date in {a} messages as well")[
            v % 2
        ]
        out = {"L1": first, "L2": second}
        if self.kind == "polarity":
            out["L3"] = (
                f"Never mention the {t} in {a} messages",
                f"Do not mention the {t} in {a} messages any more",
                f"Stop mentioning the {t} in {a} messages",
            )[v % 3]
        elif self.kind == "limit":
            out["L3"] = (f"Use no {t}s at all in {a} messages", f"Use one {t} at most in {a} messages")[v % 2]
        return out

    def expected(self) -> tuple[list[str], list[str]]:
        """(sentences that must be in the playbook, sentences that must not)."""
        lessons = {k: as_sentence(v) for k, v in self.lessons().items()}
        if "L3" in lessons:
            return [lessons["L2"], lessons["L3"]], [lessons["L1"]]
        return [lessons["L1"], lessons["L2"]], []


def topics() -> list[Topic]:
    kinds = ("refine", "polarity", "limit")
    return [Topic(AREAS[i], THINGS[i], DETAILS[i], kinds[i % 3], i // 3) for i in range(len(AREAS))]


def make_repo(parent: Path, name: str) -> MemoryRepo:
    path = parent / name
    path.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "config", "user.email", "bench@example.com"], check=True)
    subprocess.run(["git", "-C", str(path), "config", "user.name", "bench"], check=True)
    init(open_repo(path, initialised=False))
    return open_repo(path)


def record_day(repo: MemoryRepo, all_topics: list[Topic], day: int) -> None:
    key = f"L{day}"
    rows, owners = [], []
    for topic in all_topics:
        lesson = topic.lessons().get(key)
        if lesson is None:
            continue
        rows.append(
            {
                "at": f"2026-10-{day:02d}T09:{len(rows):02d}:00Z",
                "task": f"Write the {topic.area} message",
                "action": f"Drafted the {topic.area} message",
                "correction": lesson,
                "corrected_by": "lead",
                "tags": [topic.area, topic.thing],
                "source": "correction",
            }
        )
        owners.append(topic)
    for topic, ep in zip(owners, add_episodes(repo, rows), strict=True):
        topic.episodes[key] = ep.id


# -- the scripted ideal model -------------------------------------------------------------


class IdealModel:
    """Answers each prompt as a careful distiller would, from the ground truth."""

    def __init__(self, all_topics: list[Topic]) -> None:
        self.by_episode = {ep: (t, k) for t in all_topics for k, ep in t.episodes.items()}
        self.topics = all_topics

    def refresh(self) -> None:
        self.by_episode = {ep: (t, k) for t in self.topics for k, ep in t.episodes.items()}

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        prompt = body["messages"][-1]["content"]
        rules = {}
        for line in prompt.split("\n"):
            if line.startswith('{"id": "PB-'):
                rule = json.loads(line)
                rules[rule["title"]] = rule
        eps = re.findall(r'^\{"id": "(ep-[0-9a-z]+)"', prompt, re.MULTILINE)
        ops: list[dict[str, Any]] = []
        texts: dict[str, tuple[str, str]] = {t: (r["id"], r["text"]) for t, r in rules.items()}
        for ep in eps:
            topic, key = self.by_episode[ep]
            lessons = {k: as_sentence(v) for k, v in topic.lessons().items()}
            known = texts.get(topic.title)
            if known is None:
                ops.append({"op": "add", "key": topic.title, "title": topic.title, "text": lessons[key]})
                ops[-1].update(tags=[topic.area, topic.thing], episode_ids=[ep])
                texts[topic.title] = (topic.title, lessons[key])
            elif key == "L3":
                ref, text = known
                new = (text.replace(lessons["L1"], "").strip() + " " + lessons["L3"]).strip()
                keep = [e for k, e in topic.episodes.items() if k == "L2"]
                ops.append(
                    {
                        "op": "supersede",
                        "rule_id": ref,
                        "title": topic.title,
                        "text": new,
                        "reason": f"{ep} reverses the earlier correction",
                        "episode_ids": [*keep, ep],
                    }
                )
                texts[topic.title] = (ref, new)  # a later op in this reply would need the new ID
            else:
                ref, text = known
                new = f"{text} {lessons[key]}"
                ops.append({"op": "update", "rule_id": ref, "text": new, "episode_ids": [ep]})
                texts[topic.title] = (ref, new)
        return reply_json({"operations": ops}, prompt_tokens=None)


# -- scoring --------------------------------------------------------------------------------


def score(repo: MemoryRepo, all_topics: list[Topic], flags: list[Any]) -> dict[str, float]:
    book = pb.parse(repo.playbook_path.read_text(encoding="utf-8"))
    texts = [rule.text for rule in book.rules]
    present = absent = want_present = want_absent = caught = reversals = 0
    bad_citations = flagged = 0
    flagged_eps = {f.episode_id for f in flags} | {
        m for f in flags for m in re.findall(r"ep-[0-9a-z]+", f.reason)
    }
    for topic in all_topics:
        must, must_not = topic.expected()
        want_present += len(must)
        present += sum(1 for s in must if any(s in t for t in texts))
        want_absent += len(must_not)
        absent += sum(1 for s in must_not if not any(s in t for t in texts))
        if "L3" in topic.episodes:
            reversals += 1
            lessons = {k: as_sentence(v) for k, v in topic.lessons().items()}
            later = any(lessons["L3"] in t for t in texts)
            earlier = any(lessons["L1"] in t for t in texts)
            caught += 1 if later and not earlier else 0
            for rule in book.rules:
                if lessons["L3"] in rule.text and topic.episodes["L1"] in rule.episode_ids:
                    if topic.episodes["L1"] in flagged_eps or topic.episodes["L3"] in flagged_eps:
                        flagged += 1
                    else:
                        bad_citations += 1
    return {
        "lessons": present / want_present,
        "gone": absent / max(1, want_absent),
        "caught": caught / max(1, reversals),
        "bad": bad_citations,
        "flagged": flagged,
        "rules": len(book.rules),
    }


def run_case(parent: Path, distiller: str, staged: bool, llm: FakeLLM | None) -> dict[str, float]:
    repo = make_repo(parent, f"{distiller}-{'staged' if staged else 'batch'}")
    all_topics = topics()
    client = None
    model = None
    if llm is not None:
        model = IdealModel(all_topics)
        llm.script(*([model] * 3))
        settings = ModelSettings(base_url=llm.url, backoff=0.01, distill_model="ideal")
        client = ChatClient(settings, "sk-bench")
    flags: list[Any] = []
    for day in (1, 2, 3):
        record_day(repo, all_topics, day)
        if staged or day == 3:
            if model is not None:
                model.refresh()
            result = distill(repo, offline=client is None, client=client)
            flags += result.contradictions
    return score(repo, all_topics, flags)


def run_all(parent: Path) -> list[tuple[str, str, dict[str, float]]]:
    rows = []
    for staged in (True, False):
        rows.append(
            ("offline", "staged" if staged else "one batch", run_case(parent, "offline", staged, None))
        )
        with FakeLLM() as llm:
            rows.append(
                ("model (ideal)", "staged" if staged else "one batch", run_case(parent, "model", staged, llm))
            )
    return rows


def print_table(rows: list[tuple[str, str, dict[str, float]]]) -> None:
    reversals = sum(1 for t in topics() if t.kind != "refine")
    print(f"\nlessons and contradictions: {len(topics())} topics, {reversals} reversals")
    print(
        f"{'distiller':<14} {'runs':<10} {'lessons present':>15} {'reversed gone':>13} "
        f"{'contradictions caught':>21} {'unflagged contradicting citations':>33} {'flagged':>7} {'rules':>5}"
    )
    for distiller, runs, r in rows:
        print(
            f"{distiller:<14} {runs:<10} {r['lessons']:>15.0%} {r['gone']:>13.0%} {r['caught']:>21.0%} "
            f"{r['bad']:>33.0f} {r['flagged']:>7.0f} {r['rules']:>5.0f}",
            flush=True,
        )
