"""OpenAI-compatible HTTP judge: any ``/v1/chat/completions`` server
(vLLM, ``transformers serve``, SGLang, hosted APIs) as a guirl Judge.

The request's prompt becomes one user message; its images follow as
base64 PNG data URLs (``{"type": "image_url", "image_url": {"url":
"data:image/png;base64,..."}}``). Transient failures (connection errors,
HTTP 429 and 5xx) are retried with exponential backoff; answers are cached
by a hash of the request body (in memory, and on disk with ``cache_dir``),
so re-running an evaluation does not pay twice. The answer text must hold
one JSON object (see :func:`guirl.judges.parsing.extract_json_object`);
anything else - and any HTTP failure after the retries - gives
``JudgeResult(ok=False, reason=...)``, which callers score as zero.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from PIL import Image

from guirl.judges.base import JudgeRequest, JudgeResult, register_judge
from guirl.judges.parsing import extract_json_object

RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})


def image_data_url(image: Image.Image) -> str:
    """``data:image/png;base64,...`` for a PIL image."""
    buf = io.BytesIO()
    image.convert("RGB").save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


@register_judge("openai")
class OpenAIJudge:
    """Judge backed by an OpenAI-compatible chat-completions endpoint.

    Args:
        base_url: server root, e.g. ``http://127.0.0.1:8000/v1`` (``/chat/completions`` is appended).
        model: model name sent in the request.
        api_key: bearer token; default: the ``api_key_env`` environment variable, else none.
        system_prompt: optional system message.
        temperature: sampling temperature (judges run at 0).
        max_tokens: answer length cap.
        timeout_s: per-request timeout.
        max_retries: extra attempts after a transient failure.
        backoff_s: first retry delay; doubles on each retry.
        cache_dir: directory for the on-disk answer cache (off when None).
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        system_prompt: str | None = None,
        temperature: float = 0.0,
        max_tokens: int = 512,
        timeout_s: float = 60.0,
        max_retries: int = 3,
        backoff_s: float = 1.0,
        cache_dir: str | Path | None = None,
    ):
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key = api_key if api_key is not None else os.environ.get(api_key_env)
        self.system_prompt = system_prompt
        self.temperature, self.max_tokens = temperature, max_tokens
        self.timeout_s, self.max_retries, self.backoff_s = timeout_s, max_retries, backoff_s
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self._cache: dict[str, str] = {}
        self.requests_sent = 0  # HTTP attempts made (cache hits do not count)

    def build_body(self, request: JudgeRequest) -> dict[str, Any]:
        content: list[dict[str, Any]] = [{"type": "text", "text": request.prompt}]
        content += [{"type": "image_url", "image_url": {"url": image_data_url(im)}} for im in request.images]
        messages = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
        messages.append({"role": "user", "content": content})
        return {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }

    def __call__(self, request: JudgeRequest) -> JudgeResult:
        body = self.build_body(request)
        key = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        raw = self._cached(key)
        if raw is None:
            raw, error = self._post(body)
            if error:
                return JudgeResult(verdict={}, raw=raw or "", ok=False, reason=error)
            self._store(key, raw)
        verdict = extract_json_object(raw)
        if verdict is None:
            reason = f"no JSON object in the judge's answer: {raw[:80]!r}"
            return JudgeResult(verdict={}, raw=raw, ok=False, reason=reason)
        return JudgeResult(verdict=verdict, raw=raw)

    # -- transport -----------------------------------------------------------------------------
    def _post(self, body: dict[str, Any]) -> tuple[str, str]:
        """``(answer_text, "")`` or ``("", error)`` after the retries."""
        data = json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        delay, error = self.backoff_s, ""
        for attempt in range(self.max_retries + 1):
            if attempt:
                time.sleep(delay)
                delay *= 2
            self.requests_sent += 1
            req = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                    payload = resp.read().decode("utf-8", errors="replace")
            except urllib.error.HTTPError as err:
                error = f"HTTP {err.code} from {self.url}"
                if err.code not in RETRY_STATUS:
                    return "", error + " (not retried)"
                continue
            except (urllib.error.URLError, TimeoutError, ConnectionError) as err:
                error = f"cannot reach {self.url}: {getattr(err, 'reason', err)}"
                continue
            return self._content(payload)
        return "", f"{error} after {self.max_retries + 1} attempts"

    @staticmethod
    def _content(payload: str) -> tuple[str, str]:
        try:
            content = json.loads(payload)["choices"][0]["message"]["content"]
        except (json.JSONDecodeError, KeyError, IndexError, TypeError):
            return payload[:200], f"not a chat-completions response: {payload[:80]!r}"
        if not isinstance(content, str):
            return "", f"message content is {type(content).__name__}, not text"
        return content, ""

    # -- cache -----------------------------------------------------------------------------------
    def _cached(self, key: str) -> str | None:
        if key in self._cache:
            return self._cache[key]
        if self.cache_dir is not None and (self.cache_dir / f"{key}.json").is_file():
            raw = json.loads((self.cache_dir / f"{key}.json").read_text(encoding="utf-8"))["content"]
            self._cache[key] = raw
            return raw
        return None

    def _store(self, key: str, raw: str) -> None:
        self._cache[key] = raw
        if self.cache_dir is not None:
            self.cache_dir.mkdir(parents=True, exist_ok=True)
            tmp = self.cache_dir / f".{key}.tmp"
            tmp.write_text(json.dumps({"content": raw}), encoding="utf-8")
            tmp.replace(self.cache_dir / f"{key}.json")
