"""Serve any guirl Judge behind an OpenAI-compatible ``/v1/chat/completions``
endpoint (standard-library ``http.server``).

The reverse of :class:`guirl.judges.http.OpenAIJudge`: a chat request
becomes a :class:`JudgeRequest` (text parts joined as the prompt, data-URL
images decoded) and the judge's raw answer is the reply. Used to test the
HTTP client end to end on loopback, and to expose a local judge (e.g. the
rule-based outcome judge) to tools that speak the OpenAI protocol.
"""

from __future__ import annotations

import base64
import io
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from PIL import Image

from guirl.judges.base import Judge, JudgeRequest


def request_from_chat(body: dict) -> JudgeRequest:
    """A JudgeRequest from a chat-completions body (last user message)."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ValueError("'messages' must be a non-empty list")
    content = messages[-1].get("content")
    parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
    texts, images = [], []
    for part in parts or []:
        if part.get("type") == "text":
            texts.append(part.get("text", ""))
        elif part.get("type") == "image_url":
            url = part.get("image_url", {}).get("url", "")
            if not url.startswith("data:image/") or ";base64," not in url:
                raise ValueError("only base64 data-URL images are accepted")
            images.append(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB"))
    return JudgeRequest(role="chat", prompt="\n".join(texts), images=images)


def make_handler(judge: Judge, answer: Callable[[JudgeRequest, str], str] | None = None):
    """Request handler class; ``answer(request, judge_raw)`` may rewrite the reply."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server API
            if not self.path.rstrip("/").endswith("/chat/completions"):
                return self._send(404, {"error": {"message": f"no route {self.path}"}})
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                request = request_from_chat(body)
            except (ValueError, json.JSONDecodeError, AttributeError) as err:
                return self._send(400, {"error": {"message": f"bad request: {err}"}})
            result = judge(request)
            raw = result.raw or json.dumps(result.verdict)
            if answer is not None:
                raw = answer(request, raw)
            self._send(200, {
                "id": f"chatcmpl-{time.time_ns()}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "guirl-judge"),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": raw}, "finish_reason": "stop"}],
            })

        def _send(self, status: int, payload: dict) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args) -> None:  # noqa: A002 - quiet by default
            pass

    return Handler


def serve_judge(judge: Judge, host: str = "127.0.0.1", port: int = 0, answer=None) -> ThreadingHTTPServer:
    """Start serving ``judge`` in a daemon thread; ``server.server_address`` has the port.
    Stop with ``server.shutdown(); server.server_close()``."""
    server = ThreadingHTTPServer((host, port), make_handler(judge, answer))
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server
