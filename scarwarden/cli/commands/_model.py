"""``answer`` and ``review-draft`` without a model: the failure saying how to configure one
(the address shown without its password: :mod:`scarwarden.llm.endpoint`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scarwarden.errors import NoModelConfigured
from scarwarden.llm.endpoint import shown_url

if TYPE_CHECKING:  # pragma: no cover
    from scarwarden.repo import MemoryRepo


def no_model_error(repo: MemoryRepo, what: str) -> NoModelConfigured:
    """The plain 'no model is configured' failure (exit 4), saying how to configure one."""
    return NoModelConfigured(
        f"no model is configured, so {what}",
        hint=f"set {repo.config.key_names()} to use "
        f"{repo.config.model.answer_model} at {shown_url(repo.config.model.base_url)}; for another "
        "server name a preset in scarwarden.yaml (model.provider: openai, ollama, vllm, "
        "openrouter...; `scarwarden models` lists them) or set SCARWARDEN_BASE_URL "
        "and SCARWARDEN_MODEL_ANSWER. See docs/models.md.",
    )
