"""Trajectory data: schema, JSONL + image I/O, Hugging Face datasets views."""

from guirl.data.io import DataError, EpisodeWriter, iter_episodes, read_episodes, write_episodes
from guirl.data.schema import A11yNode, Episode, HistoryItem, ImageRef, Step, StepLabel, Subtask

__all__ = [
    "A11yNode",
    "DataError",
    "Episode",
    "EpisodeWriter",
    "HistoryItem",
    "ImageRef",
    "Step",
    "StepLabel",
    "Subtask",
    "iter_episodes",
    "read_episodes",
    "write_episodes",
]
