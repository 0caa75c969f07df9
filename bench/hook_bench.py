"""Benchmark of the provenance gate: the pre-commit hook and ``scarwarden verify``.

1. The hook (``scarwarden check --staged`` as a fresh process, as git runs it) on a
   commit that adds one episode and changes the playbook (a new rule citing it), with
   1,000 and 100,000 episodes committed. Target: under 150 ms at 100k and within 1.5x
   of the 1k figure (its cost must follow the staged change, not the ledger).
2. ``scarwarden verify`` over a history of 1,000 commits.

Repositories are generated with ``git fast-import`` (no 100k ``git add``), packed with
``git gc`` and cached under bench/.cache/ (delete it to regenerate).

    python bench/hook_bench.py            # 1k vs 100k, verify over 1,000 commits
    python bench/hook_bench.py --quick    # 1k vs 10k, verify over 200 commits
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache"
CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"
GEN_VERSION = "1"  # bump when the generated data changes shape

WORDS = ("newsletter subject line email open rate linkedin post hook hashtags refund "
         "approval ticket billing dispute outage routing triage discount code social "
         "coupon privacy request deletion onboarding checklist invoice release notes "
         "changelog pricing page headline webinar invite survey churn renewal contract "
         "partner launch beta feedback roadmap bug report escalation sla").split()
AGENTS = ("writer", "support", "triage", "sales", "ops")
PEOPLE = ("maya", "tom", "ines", "kofi", "lea")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="Bench", GIT_AUTHOR_EMAIL="bench@example.com",
               GIT_COMMITTER_NAME="Bench", GIT_COMMITTER_EMAIL="bench@example.com",
               GIT_CONFIG_NOSYSTEM="1")
    return env


def git(cwd: Path, *args: str, input: bytes | None = None) -> bytes:
    return subprocess.run(["git", "-C", str(cwd), *args], input=input, check=True,
                          capture_output=True, env=_env()).stdout


def ep_id(rng: random.Random) -> str:
    return "ep-" + "".join(rng.choice(CROCKFORD) for _ in range(10))


def sentence(rng: random.Random, n: int) -> str:
    words = [rng.choice(WORDS) for _ in range(n)]
    return " ".join(words).capitalize()


def episode(rng: random.Random, eid: str, year: int, month: int) -> tuple[str, bytes]:
    """A realistic ~500-byte episode and its path."""
    day, hour, minute = rng.randint(1, 28), rng.randint(0, 23), rng.randint(0, 59)
    at = f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:00Z"
    tags = sorted({rng.choice(WORDS) for _ in range(4)})
    text = (f"id: {eid}\nat: {at}\nagent: {rng.choice(AGENTS)}\n"
            f"task: {sentence(rng, 9)}\naction: {sentence(rng, 14)}\n"
            f"outcome: {sentence(rng, 12)}\ncorrection: {sentence(rng, 16)}\n"
            f"corrected_by: {rng.choice(PEOPLE)}\ntags: [{', '.join(tags)}]\n"
            f"source: correction\n")
    return f"memory/episodes/{year:04d}/{month:02d}/{eid}.yaml", text.encode()


def months(count: int) -> list[tuple[int, int]]:
    """``count`` consecutive months ending 2026-10."""
    out = []
    year, month = 2026, 10
    for _ in range(count):
        out.append((year, month))
        month -= 1
        if month == 0:
            year, month = year - 1, 12
    return list(reversed(out))


def playbook(rng: random.Random, ids: list[str], rules: int) -> str:
    parts = ["# Playbook"]
    for n in range(1, rules + 1):
        cites = ", ".join(rng.sample(ids, min(3, len(ids))))
        tags = ", ".join(sorted({rng.choice(WORDS) for _ in range(4)}))
        parts.append(f"## PB-{n:02d}: {sentence(rng, 6)}\n\n{sentence(rng, 30)}.\n\n"
                     f"- Tags: {tags}\n- Learnt in: {cites}")
    return "\n\n".join(parts) + "\n"


def _blob(data: bytes) -> bytes:
    return b"data %d\n" % len(data) + data + b"\n"


def generate_ledger(path: Path, episodes: int, rules: int = 100, seed: int = 7) -> Path:
    """A repository with ``episodes`` committed episodes in one commit, packed."""
    marker = path / ".bench-ready"
    if marker.exists() and marker.read_text() == GEN_VERSION:
        return path
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    rng = random.Random(seed)
    span = months(max(1, min(60, episodes // 500)))
    ids: list[str] = []
    stream = bytearray()
    stream += b"commit refs/heads/main\ncommitter Bench <bench@example.com> 1700000000 +0000\n"
    stream += _blob(f"bench: {episodes} episodes".encode())
    for i in range(episodes):
        eid = ep_id(rng)
        year, month = span[i % len(span)]
        rel, data = episode(rng, eid, year, month)
        ids.append(eid)
        stream += f"M 100644 inline {rel}\n".encode() + _blob(data)
    stream += b"M 100644 inline memory/playbook.md\n" + _blob(playbook(rng, ids, rules).encode())
    stream += b"M 100644 inline .gitignore\n" + _blob(b".scarwarden/\n")
    stream += b"\n"
    git(path, "fast-import", "--quiet", input=bytes(stream))
    git(path, "gc", "-q")
    git(path, "checkout", "-q", "-f", "main")
    marker.write_text(GEN_VERSION)
    return path


def generate_history(path: Path, commits: int, per_commit: int = 3, seed: int = 11) -> Path:
    """A repository whose history has ``commits`` commits, each adding episodes and
    (every third one) a rule citing them, as ``scarwarden episode add`` / ``distill``
    would."""
    marker = path / ".bench-ready"
    if marker.exists() and marker.read_text() == GEN_VERSION:
        return path
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    rng = random.Random(seed)
    span = months(24)
    ids: list[str] = []
    rules: list[str] = []
    stream = bytearray()
    for c in range(commits):
        stream += b"commit refs/heads/main\n"
        stream += f"committer Bench <bench@example.com> {1700000000 + c * 60} +0000\n".encode()
        stream += _blob(f"episode: commit {c}".encode())
        new_ids = []
        for _ in range(per_commit):
            eid = ep_id(rng)
            year, month = span[len(ids) % len(span)]
            rel, data = episode(rng, eid, year, month)
            ids.append(eid)
            new_ids.append(eid)
            stream += f"M 100644 inline {rel}\n".encode() + _blob(data)
        if c % 3 == 0:
            n = len(rules) + 1
            tags = ", ".join(sorted({rng.choice(WORDS) for _ in range(3)}))
            rules.append(f"## PB-{n:02d}: {sentence(rng, 6)}\n\n{sentence(rng, 24)}.\n\n"
                         f"- Tags: {tags}\n- Learnt in: {', '.join(new_ids)}")
            text = "\n\n".join(["# Playbook", *rules]) + "\n"
            stream += b"M 100644 inline memory/playbook.md\n" + _blob(text.encode())
        stream += b"\n"
    git(path, "fast-import", "--quiet", input=bytes(stream))
    git(path, "gc", "-q")
    git(path, "checkout", "-q", "-f", "main")
    marker.write_text(GEN_VERSION)
    return path
