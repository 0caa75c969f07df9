"""Named provider presets for ``model.provider`` in ``scarwarden.yaml`` (docs/models.md).

A preset fills in what a user would otherwise have to discover: the endpoint, a model
for each role and the environment variable its key lives in. Anything set explicitly
(``model.base_url``, ``model.answer_model``, ``SCARWARDEN_BASE_URL``...) wins over the
preset. Local servers (Ollama, vLLM, LM Studio) need no key.

Also here: choosing a preset for a settings file's ``model:`` section, by its name
(:func:`apply_preset`) or, when nothing names a server, by the key variable that is
set (:func:`provider_for_key`); :mod:`scarwarden.config` calls both.
"""

from __future__ import annotations

from collections.abc import Mapping

from scarwarden.errors import ConfigError
from scarwarden.records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


@record(frozen=True)
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


#: Each provider's own key variable -> its preset, the default (DashScope) first.
KEY_PROVIDERS: dict[str, str] = {p.key_env: p.name for p in PROVIDERS.values() if p.key_env}


def provider_for_key(env: Mapping[str, str]) -> str:
    """With no provider and no base URL set: the key variable that picks the provider
    (issue 28: ``OPENAI_API_KEY`` alone means OpenAI), the default's first; "" for none."""
    return next((var for var in KEY_PROVIDERS if env.get(var)), "")


def apply_preset(model: Any, source: str, *, from_env: bool = False) -> None:
    """Fill the endpoint and models a ``model.provider`` preset names, unless set. An
    unknown name is reported where it came from: ``source``'s key, or the variable."""
    if not isinstance(model, dict) or not model.get("provider"):
        return
    name = model["provider"]
    preset = PROVIDERS.get(name) if isinstance(name, str) else None
    if preset is None:
        import difflib

        close = difflib.get_close_matches(str(name), list(PROVIDERS), n=1)
        where = (
            f"SCARWARDEN_PROVIDER={name!r} in the environment"
            if from_env
            else f"model.provider {name!r} in {source}"
        )
        other = (
            "unset SCARWARDEN_PROVIDER and set SCARWARDEN_BASE_URL"
            if from_env
            else "leave provider out and set model.base_url"
        )
        raise ConfigError(
            f"unknown {where}",
            hint=(f"did you mean '{close[0]}'? " if close else "")
            + f"known presets: {', '.join(PROVIDERS)} (scarwarden models lists them); for any "
            f"other OpenAI-compatible server, {other}",
        )
    for key in ("base_url", "distill_model", "answer_model"):
        model.setdefault(key, getattr(preset, key))
    # Issue 19: a preset whose server reads text only sets no vision model (""), rather
    # than send images to a DashScope model name its server has never heard of.
    model.setdefault("vision_model", preset.vision_model)
