"""OpenAI-compatible HTTP judge: any ``/v1/chat/completions`` server
(vLLM, ``transformers serve``, SGLang, hosted APIs) as a guirl Judge.

The request's prompt (or the role prompt built from its fields, see
:func:`guirl.judges.prompts.request_text`) becomes one user message; its
images follow as base64 PNG data URLs (``{"type": "image_url",
"image_url": {"url": "data:image/png;base64,..."}}``).

- Concurrency: :meth:`OpenAIJudge.judge_many` sends a batch through a
  thread pool (results in request order); the client is thread-safe.
- Timeouts and retries: each attempt has ``timeout_s``; connection errors,
  timeouts, HTTP 5xx, and the two "try again later" 4xx codes 408 and 429
  are retried with exponential back-off (``backoff_s``, doubling, capped at
  ``backoff_max_s``); any other 4xx is final at once.
- Cache: answers are kept in memory by a hash of (model, system prompt,
  temperature, max_tokens, prompt, hashes of the images' pixels), and,
  with ``cache_file`` (or ``cache_dir``), appended to a JSON-lines file that
  a later client reads back. Only answers holding a JSON object are cached,
  so a garbled answer is asked again next time.
- Counters (:meth:`OpenAIJudge.metrics`): ``judge/requests`` (HTTP
  attempts), ``judge/retries``, ``judge/failures`` (calls that ended
  ``ok=False``), ``judge/cache_hits``.

Every failure - unreachable server, timeouts, HTTP errors after the
retries, a body that is not a chat-completions response, an answer without
a JSON object, a score outside the role's range - is a
``JudgeResult(ok=False, reason=...)``, which callers score as zero or mask;
the client never raises on what the server sends.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import io
import json
import os
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from PIL import Image

from guirl.judges.base import JudgeRequest, JudgeResult, register_judge
from guirl.judges.parsing import extract_json_object
from guirl.judges.prompts import read_verdict, request_text

#: 4xx codes that mean "try again later"; every 5xx is retried too.
RETRY_4XX = frozenset({408, 429})
CACHE_FILE_NAME = "judge_cache.jsonl"


def image_data_url(image: Image.Image) -> str:
    """``data:image/png;base64,...`` for a PIL image."""
    buf = io.BytesIO()
    image.convert("RGB").save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def image_hash(image: Image.Image) -> str:
    """sha256 of an image's size and RGB pixels (cheaper than encoding it)."""
    rgb = image.convert("RGB")
    return hashlib.sha256(f"{rgb.size}".encode() + rgb.tobytes()).hexdigest()


@register_judge("openai")
class OpenAIJudge:
    """Judge backed by an OpenAI-compatible chat-completions endpoint.

    Args:
        base_url: server root, e.g. ``http://127.0.0.1:8000/v1`` (``/chat/completions`` is appended).
        model: model name sent in the request.
        api_key: bearer token; default: the ``api_key_env`` environment variable, else none.
        api_key_env: environment variable holding the token.
        system_prompt: optional system message (e.g. :data:`guirl.judges.prompts.JUDGE_SYSTEM`).
        temperature: sampling temperature (judges run at 0).
        max_tokens: answer length cap.
        timeout_s: per-attempt timeout in seconds.
        max_retries: extra attempts after a transient failure.
        backoff_s: delay before the first retry; doubles on each retry.
        backoff_max_s: longest delay between two attempts.
        cache_file: JSON-lines file the answer cache is read from and appended to (off when None).
        cache_dir: directory for the cache file (``cache_dir/judge_cache.jsonl``) when ``cache_file`` is None.
        max_workers: threads :meth:`judge_many` uses by default.
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
        backoff_max_s: float = 30.0,
        cache_file: str | Path | None = None,
        cache_dir: str | Path | None = None,
        max_workers: int = 8,
    ):
        if timeout_s <= 0 or max_retries < 0 or backoff_s < 0 or max_workers < 1:
            raise ValueError(
                f"need timeout_s > 0, max_retries >= 0, backoff_s >= 0 and max_workers >= 1; got {timeout_s}, "
                f"{max_retries}, {backoff_s}, {max_workers}"
            )
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key = api_key if api_key is not None else os.environ.get(api_key_env)
        self.system_prompt = system_prompt
        self.temperature, self.max_tokens = temperature, max_tokens
        self.timeout_s, self.max_retries = timeout_s, max_retries
        self.backoff_s, self.backoff_max_s = backoff_s, backoff_max_s
        self.max_workers = max_workers
        if cache_file is None and cache_dir is not None:
            cache_file = Path(cache_dir) / CACHE_FILE_NAME
        self.cache_file = Path(cache_file) if cache_file is not None else None
        self._lock = threading.Lock()
        self._cache: dict[str, str] = self._load_cache()
        self.counters = {"requests": 0, "retries": 0, "failures": 0, "cache_hits": 0}

    @property
    def requests_sent(self) -> int:
        """HTTP attempts made (cache hits do not count)."""
        return self.counters["requests"]

    def metrics(self) -> dict[str, float]:
        """The counters, namespaced: ``judge/requests``, ``judge/retries``, ``judge/failures``, ``judge/cache_hits``."""
        with self._lock:
            return {f"judge/{name}": float(value) for name, value in self.counters.items()}

    def build_body(self, request: JudgeRequest) -> dict[str, Any]:
        content: list[dict[str, Any]] = [{"type": "text", "text": request_text(request)}]
        content += [{"type": "image_url", "image_url": {"url": image_data_url(im)}} for im in request.images]
        messages = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
        messages.append({"role": "user", "content": content})
        return {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }

    def cache_key(self, request: JudgeRequest) -> str:
        parts = [
            self.model,
            self.system_prompt,
            self.temperature,
            self.max_tokens,
            request_text(request),
            [image_hash(im) for im in request.images],
        ]
        return hashlib.sha256(json.dumps(parts).encode()).hexdigest()

    def __call__(self, request: JudgeRequest) -> JudgeResult:
        key = self.cache_key(request)
        with self._lock:
            raw = self._cache.get(key)
            self.counters["cache_hits"] += raw is not None
        if raw is None:
            raw, error = self._post(self.build_body(request))
            if error:
                self._count("failures")
                return JudgeResult(verdict={}, raw=raw, ok=False, reason=error)
            if extract_json_object(raw) is not None:
                self._store(key, raw)
        result = read_verdict(raw, request.role)
        if not result.ok:
            self._count("failures")
        return result

    def judge_many(self, requests: Sequence[JudgeRequest], max_workers: int | None = None) -> list[JudgeResult]:
        """Judge ``requests`` concurrently (``max_workers`` threads, default the client's); results in order."""
        workers = min(max_workers or self.max_workers, len(requests))
        if workers <= 1:
            return [self(r) for r in requests]
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="guirl-judge") as pool:
            return list(pool.map(self, requests))

    # -- transport -----------------------------------------------------------------------------
    def _count(self, name: str, n: int = 1) -> None:
        with self._lock:
            self.counters[name] += n

    def _post(self, body: dict[str, Any]) -> tuple[str, str]:
        """``(answer_text, "")``, or ``(raw_or_empty, error)`` once the retries are spent."""
        data = json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        delay, error = self.backoff_s, ""
        for attempt in range(self.max_retries + 1):
            if attempt:
                self._count("retries")
                time.sleep(min(delay, self.backoff_max_s))
                delay *= 2
            self._count("requests")
            req = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                    payload = resp.read().decode("utf-8", errors="replace")
            except urllib.error.HTTPError as err:
                error = f"HTTP {err.code} from {self.url}"
                if err.code < 500 and err.code not in RETRY_4XX:
                    return "", error + " (not retried)"
                continue
            except TimeoutError:
                error = f"no answer from {self.url} within {self.timeout_s:g} s"
                continue
            except (urllib.error.URLError, OSError, http.client.HTTPException) as err:
                reason = getattr(err, "reason", err)
                error = (
                    f"no answer from {self.url} within {self.timeout_s:g} s"
                    if isinstance(reason, TimeoutError)
                    else f"cannot reach {self.url}: {reason!r}"
                )
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
    def _load_cache(self) -> dict[str, str]:
        """Entries of the cache file; unreadable lines (e.g. cut short by a crash) are skipped."""
        if self.cache_file is None or not self.cache_file.is_file():
            return {}
        cache = {}
        for line in self.cache_file.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(entry, dict) and isinstance(entry.get("key"), str) and isinstance(entry.get("content"), str):
                cache[entry["key"]] = entry["content"]
        return cache

    def _store(self, key: str, raw: str) -> None:
        with self._lock:
            if key in self._cache:
                return
            self._cache[key] = raw
            if self.cache_file is not None:
                self.cache_file.parent.mkdir(parents=True, exist_ok=True)
                with self.cache_file.open("a", encoding="utf-8") as f:
                    f.write(json.dumps({"key": key, "content": raw}, ensure_ascii=False) + "\n")
