"""Parse throughput of every registered action format (prints microseconds per parse).

Run: .venv/bin/python benchmarks/actions_parse.py
"""

from __future__ import annotations

import time

from guirl.actions import Action, ActionType, Frame, available_formats, format_action, parse_action

SAMPLES = [
    Action(type=ActionType.CLICK, point=(512, 384), description="Click the OK button."),
    Action(type=ActionType.TYPE, text="hello world"),
    Action(type=ActionType.KEY, keys=("ctrl", "a")),
    Action(type=ActionType.TERMINATE, status="success"),
]


def main(repeats: int = 2000) -> None:
    frame = Frame.screen(1920, 1080)
    for fmt in available_formats():
        texts = []
        for action in SAMPLES:
            try:
                written = format_action(action, fmt)
            except ValueError:
                continue
            thought = "<think>" + "reasoning " * 50 + "</think>\n" + written
            texts.append(thought if parse_action(thought, fmt, frame) else written)
        start = time.perf_counter()
        for _ in range(repeats):
            for text in texts:
                parse_action(text, fmt, frame)
        elapsed = time.perf_counter() - start
        assert all(parse_action(text, fmt, frame) for text in texts), fmt
        print(f"{fmt:18s} {1e6 * elapsed / (repeats * len(texts)):7.1f} us/parse ({len(texts)} samples x {repeats})")


if __name__ == "__main__":
    main()
