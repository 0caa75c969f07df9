"""The one model client: OpenAI-compatible chat completions over ``requests``.

Every model call in Scarwarden goes through :class:`ChatClient` (docs/models.md):

* ``POST {base_url}/chat/completions`` with a timeout (``model.timeout``);
* retries with exponential backoff and jitter on 408, 429, 5xx, connection errors and
  timeouts, up to ``model.max_retries``, honouring ``Retry-After`` (capped);
* immediate, clear errors on 400/401/403/404 ("bad key", "model not found");
* ``response_format: json_object`` where JSON is wanted; a server that rejects it with
  400 is asked once more without it (and not asked again by this client);
* token usage from the response, or estimated as characters/4 (marked ``estimated``);
* every text of a request screened as the ledger screens episodes (:mod:`~.screen`).

The API key lives only in this object's memory and the ``Authorization`` header. It is
scrubbed from every message we build from a server's reply, because some servers echo
the key they rejected; no exception, log line, file or commit can carry it.

``requests`` costs ~110 ms to import, so it is imported inside the calls only.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar

from scarwarden.config import Config, ModelSettings, PrivacySettings
from scarwarden.errors import ConfigError, ModelError, ModelUnreachable, ValidationError
from scarwarden.files.input_policy import encoding_problem, encoding_problems_in
from scarwarden.llm.endpoint import shown_url
from scarwarden.llm.reply import (
    json_content,
    post,
    read_body,
    read_int,
    redirected,
    retry_after_seconds,
    server_says,
    token_counts,
)
from scarwarden.llm.screen import screen_messages, text_of
from scarwarden.logs import log

if TYPE_CHECKING:  # pragma: no cover
    import requests


T = TypeVar("T")

#: Longest ``Retry-After`` we honour, in seconds: a server asking for an hour should
#: fail the run clearly rather than hang it.
MAX_RETRY_AFTER = 60.0
#: Longest server error text quoted in a message.
_MAX_QUOTE = 300
KEY_VARS = ("SCARWARDEN_API_KEY", "DASHSCOPE_API_KEY")

#: A chat message; ``content`` is text, or a list of parts (text and ``image_url``)
#: for a vision model (issue 19).
Message = Mapping[str, Any]


@dataclass(frozen=True)
class Usage:
    """Token counts of one call; ``estimated`` when the server reported none."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    estimated: bool = False

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.total_tokens + other.total_tokens,
            self.estimated or other.estimated,
        )

    def to_json(self, calls: int | None = None) -> dict[str, object]:
        """The counts as JSON; with ``calls``, how many model calls they add up."""
        data: dict[str, object] = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
            "estimated": self.estimated,
        }
        if calls is not None:
            data["calls"] = calls
        return data


@dataclass(frozen=True)
class ChatResponse:
    content: str
    usage: Usage
    model: str
    #: Kinds replaced in the request (:mod:`~.screen`); personal data ``privacy: warn`` sent.
    redacted: tuple[str, ...] = ()
    personal: tuple[str, ...] = ()


def total_usage(responses: Iterable[ChatResponse]) -> Usage:
    """The usage of several calls, added up."""
    total = Usage()
    for response in responses:
        total = total + response.usage
    return total


def estimate_tokens(text: str) -> int:
    """The rough token count used where a server reports none: characters/4."""
    return (len(text) + 3) // 4


def client_from_config(config: Config, environ: Mapping[str, str] | None = None) -> ChatClient | None:
    """A client for ``config.model``, or ``None`` when no API key is configured (a
    local preset such as ``ollama`` needs none: its client sends no key)."""
    key = config.api_key(environ)
    screen: dict[str, Any] = {"allow": config.secrets.allow, "privacy": config.privacy}  # every request
    if not key:
        return None if config.needs_key() else ChatClient(config.model, "", **screen)
    env = os.environ if environ is None else environ
    candidates = ("SCARWARDEN_API_KEY", config.key_env() or "")
    source = next((var for var in candidates if var and env.get(var) == key), None)
    return ChatClient(config.model, key, key_source=source, **screen)


#: What ``_classify`` returns when the same request should be sent again at once.
_ASK_AGAIN = "\x00ask-again"


class ChatClient:
    """Talks to one OpenAI-compatible endpoint; see the module docstring."""

    def __init__(
        self,
        settings: ModelSettings,
        api_key: str,
        session: Any = None,
        *,
        key_source: str | None = None,
        sleep: Callable[[float], None] = time.sleep,
        allow: Collection[str] = (),
        privacy: PrivacySettings | None = None,
    ) -> None:
        self.settings = settings
        #: ``secrets.allow`` and ``privacy:``, which the screen of every request honours.
        self.allow, self.privacy = tuple(allow), privacy or PrivacySettings()
        self._said: set[str] = set()  # the screen's notes already logged
        self._api_key = api_key
        self._session = session
        self._sleep = sleep
        self.key_source = key_source
        #: Set once a server has rejected ``response_format``; not asked again.
        self.json_mode_supported = True
        #: Every response this client received, in order (usage accounting).
        self.calls: list[ChatResponse] = []

    def __repr__(self) -> str:  # never show the key, even in a debugger or a traceback
        return f"ChatClient(base_url={shown_url(self.settings.base_url)!r})"

    @property
    def url(self) -> str:
        return self.settings.base_url.rstrip("/") + "/chat/completions"

    def usage(self) -> Usage:
        """Total usage over every call this client made."""
        return total_usage(self.calls)

    # -- helpers --------------------------------------------------------------------
    def _scrub(self, text: str) -> str:
        if self._api_key:
            text = text.replace(self._api_key, "***")
        return text

    def _key_hint(self) -> str:
        where = self.key_source or " or ".join(KEY_VARS)
        return f"set {where} to a valid key for {shown_url(self.settings.base_url)}"

    def _model_setting(self, model: str) -> str:
        if model == self.settings.vision_model:
            return "model.vision_model in scarwarden.yaml (or SCARWARDEN_MODEL_VISION)"
        if model == self.settings.answer_model and model != self.settings.distill_model:
            return "model.answer_model in scarwarden.yaml (or SCARWARDEN_MODEL_ANSWER)"
        return "model.distill_model in scarwarden.yaml (or SCARWARDEN_MODEL_DISTILL)"

    def _server_says(self, response: requests.Response) -> str:
        """The server's error text, scrubbed and shortened, for a message."""
        return server_says(response, self._scrub, _MAX_QUOTE)

    def _delay(self, attempt: int, response: requests.Response | None) -> float:
        if response is not None:
            after = retry_after_seconds(response.headers.get("Retry-After"))
            if after is not None:
                return min(after, MAX_RETRY_AFTER)
        base = self.settings.backoff * (2**attempt)
        return base * (0.5 + random.random())  # jitter: spread clients that failed together

    # -- the call -------------------------------------------------------------------
    def complete(
        self, messages: Sequence[Message], *, model: str, json_mode: bool = False, temperature: float = 0.2
    ) -> ChatResponse:
        """One chat completion; raises ModelUnreachable (3) or ModelError (5)."""
        import requests

        if self._session is None:
            self._session = requests.Session()
        screened = screen_messages(messages, self.allow, self.privacy, self._said)
        body: dict[str, Any] = {"model": model, "messages": screened.messages, "temperature": temperature}
        if json_mode and self.json_mode_supported:
            body["response_format"] = {"type": "json_object"}
        attempts = 1 + max(0, self.settings.max_retries)
        last_problem, attempt = "", 0
        while attempt < attempts:
            response, outcome = self._post(body, model)
            if isinstance(outcome, ChatResponse):
                outcome = replace(outcome, redacted=screened.redacted, personal=screened.personal)
                self.calls.append(outcome)
                return outcome
            if outcome is _ASK_AGAIN:
                continue
            last_problem = outcome
            attempt += 1
            if attempt < attempts:
                delay = self._delay(attempt - 1, response)
                log.info(
                    "model server: %s; retry %d of %d in %.1f s", last_problem, attempt, attempts - 1, delay
                )
                self._sleep(delay)
        raise ModelUnreachable(
            f"the model server at {shown_url(self.settings.base_url)} did not answer after "
            f"{attempts} attempt{'s' if attempts != 1 else ''}: {last_problem}",
            hint="check the network and model.base_url (SCARWARDEN_BASE_URL); raise "
            "model.timeout or model.max_retries in scarwarden.yaml; or run offline",
        )

    def _post(self, body: dict[str, Any], model: str) -> tuple[requests.Response | None, ChatResponse | str]:
        """One attempt: a reply, ``_ASK_AGAIN``, or a transient problem worth a retry.

        Problems no retry can fix (a bad URL, key or model, a refused request) raise.
        """
        import requests

        headers = {"Content-Type": "application/json"}
        if self._api_key:  # a local server (Ollama, vLLM) gets no key at all
            headers["Authorization"] = f"Bearer {self._api_key}"
        deadline = time.monotonic() + self.settings.timeout
        try:
            response = post(self._session, self.url, body, headers, self.settings.timeout)
        except (
            requests.exceptions.MissingSchema,
            requests.exceptions.InvalidSchema,
            requests.exceptions.InvalidURL,
        ):
            # A typo in the setting, not a network problem: retrying cannot help.
            raise ConfigError(
                f"model.base_url is not a usable http(s) URL: {shown_url(self.settings.base_url)!r}",
                hint="set it (or SCARWARDEN_BASE_URL) to the part before "
                "/chat/completions, e.g. http://localhost:11434/v1",
            ) from None
        except requests.Timeout:
            return None, f"no answer within {self.settings.timeout:g} s (model.timeout)"
        except requests.RequestException as exc:
            return None, f"cannot connect ({type(exc).__name__})"
        problem = read_body(response, deadline, self.settings.timeout)
        if problem is not None:
            return None, problem
        return response, self._classify(response, body, model)

    def _classify(self, response: requests.Response, body: dict[str, Any], model: str) -> ChatResponse | str:
        status = response.status_code
        if status == 200:
            return self._parse(response, body, model)
        if status == 400 and "response_format" in body:
            # Some OpenAI-compatible servers reject response_format; the prompt
            # still asks for JSON and complete_json checks it, so go on without.
            log.info("the model server rejected response_format (HTTP 400); asking again without it")
            self.json_mode_supported = False
            del body["response_format"]
            return _ASK_AGAIN
        if 300 <= status < 400:  # not followed: the key goes to base_url only
            raise redirected(response, shown_url(self.settings.base_url), self._scrub)
        if status in (401, 403):
            raise ModelError(
                f"bad key: the model server at {shown_url(self.settings.base_url)} refused the "
                f"API key (HTTP {status}): {self._server_says(response)}",
                hint=self._key_hint(),
            )
        if status == 404:
            raise ModelError(
                f"model not found: {model} (HTTP 404 from {shown_url(self.url)}): "
                f"{self._server_says(response)}",
                hint=f"set {self._model_setting(model)} to a model this server "
                f"serves, or fix model.base_url (SCARWARDEN_BASE_URL)",
            )
        # 408: the server (or a proxy) timed out waiting, as transient as a 503.
        if status in (408, 429) or status >= 500:
            return f"HTTP {status}: {self._server_says(response)}"
        raise ModelError(
            f"the model server refused the request (HTTP {status}): {self._server_says(response)}",
            hint="check model.base_url and the model name in scarwarden.yaml",
        )

    def _parse(self, response: requests.Response, body: dict[str, Any], model: str) -> ChatResponse:
        try:
            data = response.json(parse_int=read_int)
            message = data["choices"][0]["message"]
            content = message.get("content")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError):
            raise ModelError(
                "the model server answered HTTP 200 without a chat completion: "
                f"{self._scrub(response.text[:_MAX_QUOTE])!r}",
                hint="model.base_url must point at an OpenAI-compatible /v1 endpoint",
            ) from None
        if isinstance(content, list):  # parts, the form requests take: the text ones
            texts = [p for p in content if isinstance(p, dict) and p.get("type", "text") == "text"]
            content = "".join(str(p.get("text") or "") for p in texts) or None
        if not isinstance(content, str):
            raise ModelError(
                "the model's reply had no text content", hint="use a chat model that answers in text"
            )
        not_text = encoding_problem(content)  # a JSON "\ud800" escape: nothing can print or store it
        if not_text is not None:
            raise ModelError(f"the model's reply {not_text}", hint="run again, or choose another model")
        if self._api_key and self._api_key in content + str(data.get("model") or ""):
            # an echo of the request (a wrong base_url): used, the key would be committed
            raise ModelError(
                "the model server's reply holds the API key it was sent; nothing was used",
                hint="check that model.base_url (SCARWARDEN_BASE_URL) is the chat completions "
                "server you meant, and rotate the key if it is not",
            )
        counts = token_counts(data.get("usage") if isinstance(data, dict) else None)
        if counts is not None:
            counted = Usage(*counts, estimated=False)
        else:
            prompt = estimate_tokens("".join(text_of(m.get("content", "")) for m in body["messages"]))
            completion = estimate_tokens(content)
            counted = Usage(prompt, completion, prompt + completion, estimated=True)
        return ChatResponse(content, counted, str(data.get("model") or model))


def complete_json(
    client: ChatClient, messages: Sequence[Message], *, model: str, parse: Callable[[Any], T], what: str
) -> tuple[T, list[ChatResponse]]:
    """Ask for JSON and return ``parse(data)``; one repair attempt, then ModelError (5).

    ``parse`` validates the decoded JSON and raises ``ValueError`` (or our
    ``ValidationError``) saying exactly what is wrong; that text goes back to the model
    in the repair request.
    """
    history = [dict(m) for m in messages]
    responses: list[ChatResponse] = []
    problem = ""
    for attempt in range(2):
        response = client.complete(history, model=model, json_mode=client.settings.json_mode)
        responses.append(response)
        try:
            data = json_content(response.content)
        except json.JSONDecodeError as exc:
            problem = f"it is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        except RecursionError:  # "[[[[..." a hundred thousand deep
            problem = "it is nested too deeply to read"
        else:
            not_text = next(encoding_problems_in(data), None)  # no one can print or store it
            try:
                if not_text is not None:
                    raise ValueError(" ".join(not_text).strip())
                return parse(data), responses
            except ValidationError as exc:
                problem = exc.message
            except ValueError as exc:
                problem = str(exc)
        if attempt == 0:
            log.info("the model's %s was not valid (%s); asking it to repair it", what, problem)
            history += [
                {"role": "assistant", "content": response.content},
                {
                    "role": "user",
                    "content": f"Your reply is not valid: {problem}. Reply again with only the {what} "
                    "as one JSON object, exactly in the format asked for above: no prose, "
                    "no markdown, no code fences.",
                },
            ]
    raise ModelError(
        f"the model's {what} was not the JSON asked for, even after one repair attempt: {problem}",
        hint="nothing was changed; run again, or choose another model "
        "(model.distill_model / model.answer_model in scarwarden.yaml)",
    )
