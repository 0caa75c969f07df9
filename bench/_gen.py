"""Generate a realistic memory repository with N episodes, fast, and cache it.

The episodes are ~500-byte YAML files rendered by ``scarwarden.files.episodes.render_episode``
(canonical form, keys in order), with IDs in the minted format, varied tasks, tags and
agents, and ``at`` spread over months so they shard into ``YYYY/MM`` folders. A playbook
cites some of them. Everything is written with one ``git fast-import`` (blobs and one
commit), packed with ``git gc`` (never ``--aggressive``: 30+ s for no gain), then checked
out, so 100k episodes take seconds of git time rather than minutes of ``git add``.

Generated repositories are cached under ``bench/.cache/`` (git-ignored) by size, rule
count and seed. :func:`make_repo` hands out a *copy* (``cp -a``), so a benchmark can
commit to it while the cached one stays pristine.

Library use (other benchmarks)::

    from _gen import make_repo, load_manifest
    repo = make_repo(100_000, tmp_path / "repo", rules=50, seed=1)
    manifest = load_manifest(repo)   # {"episode_ids": [...], "rule_ids": [...], ...}

CLI::

    python bench/_gen.py 100000 /tmp/mem100k [--rules 50] [--seed 1]
    python bench/_gen.py 100000            # only fill the cache; prints its path
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
#: Where generated repositories are kept (``SCARWARDEN_BENCH_CACHE`` overrides: a 1M memory
#: takes ~17 min and ~2.8 GB, so share one cache between checkouts).
CACHE_DIR = Path(os.environ.get("SCARWARDEN_BENCH_CACHE") or BENCH_DIR / ".cache")
sys.path.insert(0, str(BENCH_DIR.parent))  # run from a checkout without installing

from scarwarden.files import playbook as pb  # noqa: E402
from scarwarden.files.episodes import render_episode  # noqa: E402

#: Bump when the generated content changes, so stale caches are not reused.
GEN_VERSION = 1
EPISODES_REL = "memory/episodes"
MANIFEST = "bench-manifest.json"  # kept inside .git/, so it travels with every copy
IDENTITY = {
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}
_CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"
#: Episodes are spread over the 36 months ending with this one.
LAST_MONTH = (2026, 11)
MONTHS = 36

# -- content ------------------------------------------------------------------------
# Scenarios of a small content-and-support team; each slot is filled per episode so the
# tasks, texts and tag sets vary (recall and full-text search see realistic spread).
CHANNELS = [
    "LinkedIn",
    "Twitter",
    "the newsletter",
    "the blog",
    "Instagram",
    "the forum",
    "the changelog",
    "Mastodon",
    "the help centre",
    "YouTube",
]
PRODUCTS = [
    "Loop Inbox",
    "Loop Forms",
    "the beta",
    "the mobile app",
    "the API",
    "the Pro plan",
    "the analytics add-on",
    "the Slack integration",
    "the free tier",
]
TOPICS = [
    "pricing change",
    "spring sale",
    "webinar",
    "outage",
    "release notes",
    "customer story",
    "hiring post",
    "security update",
    "new integration",
    "onboarding guide",
    "roadmap",
    "holiday hours",
]
LANGS = ["German", "French", "Spanish", "Portuguese", "Italian", "Dutch", "Japanese"]
PEOPLE = ["ines", "tomas", "maya", "lucas", "priya", "omar", "sofia", "ken", "lena"]
AGENTS = [
    "writer",
    "social",
    "support-triage",
    "seo",
    "translator",
    "billing-bot",
    "community",
    "release-notes",
    "onboarding",
]

SCENARIOS: list[dict[str, Any]] = [
    {
        "agent": "writer",
        "task": "Draft a post for {channel} announcing {product}",
        "action": "Opened with a feature list of {product}, three emoji and the hashtags at the top",
        "outcome": "Engagement on {channel} was {pct}% below the team's average for the quarter",
        "correction": "Lead with the pain the reader already feels, one emoji at most, hashtags at the end",
        "tags": ["post", "announcement", "hook", "hashtags"],
        "source": "correction",
    },
    {
        "agent": "social",
        "task": "Promote the {topic} on {channel}",
        "action": "Posted the discount code SAVE{pct} in the public {channel} post",
        "outcome": "The code showed up on three coupon sites within {days} days and margin dropped",
        "correction": "Never post discount codes publicly; send them to the private email list only",
        "tags": ["discount", "code", "social", "coupon"],
        "source": "correction",
    },
    {
        "agent": "support-triage",
        "task": "Triage the ticket about a double charge on {product}",
        "action": "Filed it as a low-priority feature request after reading the first line only",
        "outcome": "The customer waited {days} days, disputed the charge with the bank and churned",
        "correction": "Billing disputes are high priority; read the whole message before choosing a category",
        "tags": ["billing", "dispute", "ticket", "priority", "triage"],
        "source": "correction",
    },
    {
        "agent": "support-triage",
        "task": "Route the report that {product} is down for several customers",
        "action": "Assigned it to sales because the sender was on the enterprise plan",
        "outcome": "On-call heard about the outage {days} hours later from a status page monitor",
        "correction": "Outage reports go to the on-call engineer first, whatever plan the sender is on",
        "tags": ["outage", "ticket", "routing", "triage"],
        "source": "correction",
    },
    {
        "agent": "translator",
        "task": "Translate the help centre article on {product} into {lang}",
        "action": "Translated everything, including product names, and left the screenshots uncaptioned",
        "outcome": "Customers asked support what the translated product name meant; "
        "the UI still shows it in English",
        "correction": (
            "Use the glossary in the shared drive and keep product names such as {product} in English"
        ),
        "tags": ["translation", "glossary", "help-centre"],
        "source": "human-answer",
    },
    {
        "agent": "seo",
        "task": "Write the meta description for the {topic} page",
        "action": "Wrote {pct} words stuffed with the keyword and no call to action",
        "outcome": "Click-through from search fell by {pct}% over the next {days} days",
        "correction": "Keep meta descriptions under 155 characters, one keyword, and end with an action",
        "tags": ["seo", "meta-description", "search"],
        "source": "outcome",
    },
    {
        "agent": "release-notes",
        "task": "Write the release notes for the {topic} in {product}",
        "action": "Listed internal ticket numbers and the names of the refactored modules",
        "outcome": "Readers replied asking what actually changed for them and how to turn it on",
        "correction": "Release notes describe what changes for the user and how to use it, not our internals",
        "tags": ["release-notes", "changelog", "clarity"],
        "source": "correction",
    },
    {
        "agent": "community",
        "task": "Reply to the angry thread on {channel} about the {topic}",
        "action": "Replied with the standard apology template and a link to the pricing page",
        "outcome": "The thread grew to {pct} replies and a journalist quoted the template",
        "correction": "Answer the specific complaint in plain words, name a person, and move it to a ticket",
        "tags": ["community", "reply", "tone", "escalation"],
        "source": "correction",
    },
    {
        "agent": "onboarding",
        "task": "Send the welcome email for new {product} trials",
        "action": "Sent five links and a 900-word tour of every feature on day one",
        "outcome": "Only {pct}% of trials opened a second email; activation flat for {days} days",
        "correction": "One next step per onboarding email; the first one asks the user to invite a teammate",
        "tags": ["onboarding", "email", "activation"],
        "source": "outcome",
    },
    {
        "agent": "billing-bot",
        "task": "Answer the refund request for {product} after the {topic}",
        "action": "Refused the refund because the request came {days} days after the charge",
        "outcome": "The customer was inside the 30-day window counted from the renewal date",
        "correction": "Count the refund window from the renewal date, and ask a human when in doubt",
        "tags": ["billing", "refund", "policy"],
        "source": "human-answer",
    },
    {
        "agent": "writer",
        "task": "Draft the webinar reminder about the {topic} for {channel}",
        "action": "Wrote that the session starts tomorrow at 10 without a timezone",
        "outcome": "Replies asked whether 10 meant London, Berlin or New York; attendance fell {pct}%",
        "correction": "Always include the timezone in webinar times, UTC first, then the main local ones",
        "tags": ["webinar", "reminder", "timezone"],
        "source": "correction",
    },
    {
        "agent": "social",
        "task": "Schedule the thread on {channel} for the {topic}",
        "action": "Scheduled it for 3 a.m. in the audience's timezone on a Sunday",
        "outcome": "Reach was {pct}% of a normal weekday post",
        "correction": "Schedule posts for weekday mornings in the main audience's timezone",
        "tags": ["scheduling", "social", "timing"],
        "source": "outcome",
    },
]
EXTRA_TAGS = [
    "linkedin",
    "twitter",
    "newsletter",
    "blog",
    "q1",
    "q2",
    "q3",
    "q4",
    "enterprise",
    "smb",
    "eu",
    "us",
    "apac",
    "urgent",
    "experiment",
    "a-b-test",
]
RULE_VERBS = ["Before publishing,", "When in doubt,", "For every customer,", "As a rule,"]
DETAILS = [
    "{person} raised it in the weekly review and asked for a playbook rule.",
    "The same thing happened last month on {channel}; nobody wrote it down then.",
    "{person} spent about {days} minutes cleaning up afterwards.",
    "Flagged in the retro for the {topic}; the numbers are in the team dashboard.",
    "A customer mentioned it on a call with {person} the following week.",
]


def _fill(template: str, slots: dict[str, Any]) -> str:
    return template.format(**slots)


def _mint(rng: random.Random, taken: set[str]) -> str:
    while True:
        ep_id = "ep-" + "".join(rng.choice(_CROCKFORD) for _ in range(10))
        if ep_id not in taken:
            taken.add(ep_id)
            return ep_id


def _month_starts() -> list[dt.datetime]:
    year, month = LAST_MONTH
    out = []
    for _ in range(MONTHS):
        out.append(dt.datetime(year, month, 1, tzinfo=dt.timezone.utc))
        year, month = (year, month - 1) if month > 1 else (year - 1, 12)
    return out[::-1]


def episode_data(n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` deterministic, varied episode mappings (stored form, keys in order)."""
    rng = random.Random(seed)
    taken: set[str] = set()
    starts = _month_starts()
    out: list[dict[str, Any]] = []
    recent: list[str] = []
    for i in range(n):
        sc = rng.choice(SCENARIOS)
        slots = {
            "channel": rng.choice(CHANNELS),
            "product": rng.choice(PRODUCTS),
            "topic": rng.choice(TOPICS),
            "lang": rng.choice(LANGS),
            "pct": rng.randint(5, 80),
            "days": rng.randint(2, 30),
            "person": rng.choice(PEOPLE).title(),
        }
        start = rng.choice(starts)
        at = start + dt.timedelta(
            days=rng.randint(0, 27),
            hours=rng.randint(7, 19),
            minutes=rng.randint(0, 59),
            seconds=rng.choice((0, 0, 30)),
        )
        ep_id = _mint(rng, taken)
        data: dict[str, Any] = {
            "id": ep_id,
            "at": at.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "agent": sc["agent"] if rng.random() < 0.8 else rng.choice(AGENTS),
            "task": _fill(sc["task"], slots) + f" (#{i % 997 + 1})",
        }
        keep = rng.random()
        if keep < 0.9:
            data["action"] = _fill(sc["action"], slots)
        data["outcome"] = _fill(sc["outcome"], slots)
        if rng.random() < 0.85:
            data["outcome"] += ". " + _fill(rng.choice(DETAILS), slots)
        if sc["source"] != "outcome" or keep < 0.3:
            data["correction"] = _fill(sc["correction"], slots)
            data["corrected_by"] = rng.choice(PEOPLE)
        tags = list(sc["tags"])
        rng.shuffle(tags)
        tags = tags[: rng.randint(2, len(tags))] + rng.sample(EXTRA_TAGS, rng.randint(0, 2))
        data["tags"] = list(dict.fromkeys(tags))
        data["source"] = sc["source"]
        if recent and rng.random() < 0.15:
            data["refs"] = [rng.choice(recent)]
        if rng.random() < 0.2:
            data["rules_applied"] = [f"PB-{rng.randint(1, 40):02d}"]
        out.append(data)
        recent.append(ep_id)
        if len(recent) > 50:
            recent.pop(0)
    return out


def playbook_text(episodes: list[dict[str, Any]], rules: int, seed: int) -> str:
    """A canonical playbook of ``rules`` rules, each citing 1-4 of ``episodes``."""
    rng = random.Random(seed + 1)
    built = []
    for number in range(1, rules + 1):
        sc = SCENARIOS[(number - 1) % len(SCENARIOS)]
        cited = [e for e in rng.sample(episodes, min(len(episodes), 8)) if e["source"] == sc["source"]][
            :4
        ] or [rng.choice(episodes)]
        slots = {
            "channel": rng.choice(CHANNELS),
            "product": rng.choice(PRODUCTS),
            "topic": rng.choice(TOPICS),
            "lang": rng.choice(LANGS),
            "pct": rng.randint(5, 80),
            "days": rng.randint(2, 30),
        }
        correction = _fill(sc["correction"], slots)
        title = f"{correction.split(';')[0].split(',')[0][:60].rstrip()} ({number})"
        text = (
            f"{rng.choice(RULE_VERBS)} {correction[0].lower()}{correction[1:]}. "
            f"This applies to {_fill(sc['task'], slots).lower()} and similar work on "
            f"{slots['channel']}."
        )
        tags = list(sc["tags"]) + rng.sample(EXTRA_TAGS, 1)
        built.append(pb.make_rule(f"PB-{number:02d}", title, text, tags, [e["id"] for e in cited]))
    book = pb.Playbook(rules=tuple(built), preamble="Rules distilled from the episodes in episodes/.")
    return pb.render(book)


def _relpath(data: dict[str, Any]) -> str:
    at = data["at"]
    return f"{EPISODES_REL}/{at[0:4]}/{at[5:7]}/{data['id']}.yaml"


def _render_chunk(chunk: list[dict[str, Any]]) -> list[bytes]:
    return [render_episode(d).encode("utf-8") for d in chunk]


def render_all(episodes: list[dict[str, Any]], workers: int | None = None) -> list[bytes]:
    """Render every episode with ``render_episode`` (PyYAML's dumper: ~0.4 ms each, so
    100k use both cores)."""
    workers = workers or min(2, os.cpu_count() or 1)
    if workers < 2 or len(episodes) < 5000:
        return _render_chunk(episodes)
    import multiprocessing

    size = 2000
    chunks = [episodes[i : i + size] for i in range(0, len(episodes), size)]
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        return [raw for part in pool.map(_render_chunk, chunks) for raw in part]


def _git(cwd: Path, *args: str, input: bytes | None = None) -> bytes:
    env = {**os.environ, **IDENTITY}
    for var in ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE"):
        env.pop(var, None)
    proc = subprocess.run(["git", *args], cwd=cwd, input=input, capture_output=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {proc.stderr.decode()}")
    return proc.stdout


def _fast_import_stream(files: list[tuple[str, bytes]], when: int) -> bytes:
    parts: list[bytes] = []
    for mark, (_path, raw) in enumerate(files, 1):
        parts.append(b"blob\nmark :%d\ndata %d\n" % (mark, len(raw)))
        parts.append(raw)
        parts.append(b"\n")
    message = f"bench: {len(files) - 2} generated episodes and a playbook\n".encode()
    parts.append(b"commit refs/heads/main\nmark :%d\n" % (len(files) + 1))
    parts.append(b"committer Bench <bench@example.com> %d +0000\n" % when)
    parts.append(b"data %d\n%s\n" % (len(message), message))
    for mark, (path, _raw) in enumerate(files, 1):
        parts.append(b"M 100644 :%d %s\n" % (mark, path.encode("utf-8")))
    parts.append(b"\ndone\n")
    return b"".join(parts)


def generate(n_episodes: int, dest: Path, *, rules: int = 50, seed: int = 1) -> Path:
    """Build the repository at ``dest`` (which must not exist) from scratch."""
    t0 = time.perf_counter()
    episodes = episode_data(n_episodes, seed)
    rendered = render_all(episodes)
    book = playbook_text(episodes, rules, seed) if episodes and rules else "# Playbook\n"
    files = [(".gitignore", b".scarwarden/\n"), ("memory/playbook.md", book.encode("utf-8"))]
    files += [(_relpath(d), raw) for d, raw in zip(episodes, rendered)]
    t1 = time.perf_counter()
    dest.mkdir(parents=True)
    _git(dest, "init", "-q", "-b", "main")
    for key, value in (
        ("user.name", "Bench"),
        ("user.email", "bench@example.com"),
        ("commit.gpgsign", "false"),
    ):
        _git(dest, "config", key, value)
    when = int(dt.datetime(*LAST_MONTH, 28, tzinfo=dt.timezone.utc).timestamp())
    _git(dest, "fast-import", "--quiet", "--done", input=_fast_import_stream(files, when))
    _git(dest, "gc", "-q", "--prune=now")
    _git(dest, "reset", "-q", "--hard", "main")  # the working tree and git's index
    manifest = {
        "gen_version": GEN_VERSION,
        "episodes": n_episodes,
        "rules": rules,
        "seed": seed,
        "episode_ids": [d["id"] for d in episodes],
        "episode_paths": [path for path, _ in files[2:]],
        "rule_ids": [f"PB-{i:02d}" for i in range(1, rules + 1)] if episodes else [],
        "bytes_mean": (sum(len(r) for r in rendered) / len(rendered)) if rendered else 0,
        "seconds": {"content": round(t1 - t0, 2), "git": round(time.perf_counter() - t1, 2)},
    }
    (dest / ".git" / MANIFEST).write_text(json.dumps(manifest))
    return dest


def cached_repo(n_episodes: int, *, rules: int = 50, seed: int = 1) -> Path:
    """The pristine cached repository for these parameters (generated on first use).

    Do not modify it; :func:`make_repo` gives you a copy.
    """
    path = CACHE_DIR / f"mem-v{GEN_VERSION}-n{n_episodes}-r{rules}-s{seed}"
    if (path / ".git" / MANIFEST).exists():
        return path
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    tmp = CACHE_DIR / f".{path.name}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        generate(n_episodes, tmp, rules=rules, seed=seed)
        shutil.rmtree(path, ignore_errors=True)
        os.replace(tmp, path)  # another process may have raced us; either copy is fine
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return path


def make_repo(n_episodes: int, dest: Path | str, *, rules: int = 50, seed: int = 1) -> Path:
    """A fresh working copy of a generated memory repo with ``n_episodes`` at ``dest``.

    ``dest`` must not exist. The copy keeps file and folder times (``cp -a``), and git's
    index is re-stat'ed afterwards, so the first git command in it is not charged for
    re-hashing every file (copies get new inodes and ctimes).
    """
    dest = Path(dest)
    if dest.exists():
        raise FileExistsError(dest)
    # resolve(): a cache folder may be a symbolic link to a shared cache; ``cp -a`` of the
    # link itself would hand out the link, and the caller would change the shared memory.
    src = cached_repo(n_episodes, rules=rules, seed=seed).resolve()
    dest.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cp", "-a", str(src), str(dest)], check=True)
    _git(dest, "update-index", "-q", "--refresh")
    return dest


def load_manifest(repo: Path | str) -> dict[str, Any]:
    """What was generated: episode IDs and paths (in generation order), rule IDs, sizes."""
    data: dict[str, Any] = json.loads((Path(repo) / ".git" / MANIFEST).read_text())
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("episodes", type=int, help="number of episodes")
    parser.add_argument(
        "dest",
        nargs="?",
        help="where to put a working copy (default: only fill the cache and print its path)",
    )
    parser.add_argument("--rules", type=int, default=50, help="rules in the playbook")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    if args.dest:
        path = make_repo(args.episodes, args.dest, rules=args.rules, seed=args.seed)
    else:
        path = cached_repo(args.episodes, rules=args.rules, seed=args.seed)
    info = load_manifest(path)
    print(
        f"{path}: {info['episodes']} episodes (~{info['bytes_mean']:.0f} bytes each), "
        f"{info['rules']} rules; generation took {info['seconds']}, "
        f"this call {time.perf_counter() - start:.1f}s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
