"""One module per command (pre-commit's layout). ``SHORT_HELP`` feeds ``--help``
without importing them."""

from __future__ import annotations

SHORT_HELP = {
    "init": "Make this git repository a memory repository.",
    "demo": "The whole loop on the bundled demo memory, no model needed.",
    "episode": "Record and read episodes (the append-only ledger).",
    "rule": "Add, list and audit playbook rules.",
    "recall": "Rules that apply to a task, why they matched, and the verdict.",
    "ask": "Recall; when memory has nothing, ask a human and record the answer.",
    "log": "The recall log: what was recalled, when, and with what verdict.",
    "distill": "Turn new episodes into cited playbook changes, as one commit.",
    "answer": "Answer a task citing memory; --no-memory / --compare for the amnesia toggle.",
    "review-draft": "Check a draft written elsewhere against the recalled rules.",
    "audit-image": "Check an image against the learnt (visual) rules, with citations.",
    "feedback": "Record what happened after a recorded answer, as a new episode.",
    "check": "The provenance gate (pre-commit hook and CI).",
    "verify": "Prove the whole history honest: append-only ledger, resolving playbook.",
    "redact": "Take a leaked episode's content back, provably, in one commit.",
    "hooks": "Install or uninstall the git pre-commit hook.",
    "merge-playbook": "Git's merge driver for the playbook: merge rule by rule.",
    "gate-hook": "What the reference-transaction and pre-push hooks run.",
    "sync": "Share memory with a remote: fetch, integrate, push, retry.",
    "diff": "Semantic diff of the playbook between two revisions.",
    "review": "Pull-request report of memory changes, with evidence.",
    "serve": "The audit web UI on loopback.",
    "audit": "Write the audit pages as static HTML.",
    "export": "Write the playbook into AGENTS.md, CLAUDE.md, Cursor or Copilot files.",
    "mcp": "Serve this memory to agents over the Model Context Protocol (stdio).",
    "models": "Provider presets, the model settings in use, and a live test of them.",
    "index": "Refresh or rebuild the SQLite index (a cache of the files).",
}
