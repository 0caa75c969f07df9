"""The model client: one OpenAI-compatible chat-completions endpoint (docs/models.md).

Only distillation and answers use it; recall and the gate never import it (the
import-linter contracts in pyproject.toml say so).
"""

from scarwarden.llm.client import ChatClient, ChatResponse, Usage, client_from_config, complete_json

__all__ = ["ChatClient", "ChatResponse", "Usage", "client_from_config", "complete_json"]
