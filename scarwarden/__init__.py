"""Scarwarden: an auditable, git-native memory engine for AI agents.

No provenance, no rule: every rule in the playbook cites the episodes that taught it,
and code (not a prompt) checks that those citations resolve.
"""

from __future__ import annotations

__version__ = "0.1.0"
