"""guirl: post-training GUI agents (see docs/architecture.md)."""

__version__ = "0.1.0"
