"""Named provider presets for ``model.provider`` in ``scarwarden.yaml`` (docs/models.md).

A preset fills in what a user would otherwise have to discover: the endpoint, a model
for each role and the environment variable its key lives in. Anything set explicitly
(``model.base_url``, ``model.answer_model``, ``SCARWARDEN_BASE_URL``...) wins over the
preset. Local servers (Ollama, vLLM, LM Studio) need no key.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Provider:
    name: str
    base_url: str
    distill_model: str
    answer_model: str
    #: The provider's own key variable (``SCARWARDEN_API_KEY`` always works too);
    #: None for a local server that needs no key.
    key_env: str | None
    note: str = ""
    #: The vision-language model of ``audit-image`` (issue 19), served at ``base_url``;
    #: empty: the provider serves none (DeepSeek's API reads text only), so audit-image
    #: lists the rules and judges nothing until ``model.vision_model`` names one.
    vision_model: str = ""

    @property
    def needs_key(self) -> bool:
        return self.key_env is not None


PROVIDERS: dict[str, Provider] = {
    p.name: p
    for p in (
        Provider(
            "dashscope",
            "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
            "qwen3.6-flash",
            "qwen3.7-plus",
            "DASHSCOPE_API_KEY",
            "Alibaba Cloud Model Studio, international endpoint (the default)",
            vision_model="qwen3-vl-plus",
        ),
        Provider(
            "openai",
            "https://api.openai.com/v1",
            "gpt-4.1-mini",
            "gpt-4.1",
            "OPENAI_API_KEY",
            "OpenAI",
            vision_model="gpt-4.1-mini",
        ),
        Provider(
            "openrouter",
            "https://openrouter.ai/api/v1",
            "openai/gpt-4.1-mini",
            "openai/gpt-4.1",
            "OPENROUTER_API_KEY",
            "OpenRouter: one key, many vendors' models",
            vision_model="openai/gpt-4.1-mini",
        ),
        Provider(
            "deepseek", "https://api.deepseek.com/v1", "deepseek-chat", "deepseek-chat", "DEEPSEEK_API_KEY"
        ),
        Provider(
            "ollama",
            "http://localhost:11434/v1",
            "qwen3:8b",
            "qwen3:8b",
            None,
            "local Ollama (ollama pull qwen3:8b; for images, ollama pull qwen2.5vl:7b)",
            vision_model="qwen2.5vl:7b",
        ),
        Provider(
            "vllm",
            "http://localhost:8000/v1",
            "Qwen/Qwen3-8B",
            "Qwen/Qwen3-8B",
            None,
            "local vLLM (vllm serve Qwen/Qwen3-8B)",
            # One vLLM server serves one model: images need a second server (or this
            # one) serving the VL model at base_url; docs/models.md has the recipe.
            vision_model="Qwen/Qwen2.5-VL-7B-Instruct",
        ),
        Provider(
            "lmstudio",
            "http://localhost:1234/v1",
            "qwen3-8b",
            "qwen3-8b",
            None,
            "local LM Studio server",
            vision_model="qwen2.5-vl-7b-instruct",
        ),
    )
}

DEFAULT_PROVIDER = "dashscope"
