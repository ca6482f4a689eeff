"""Parlour: card and dice games from old rule books as multi-agent RL environments."""

__version__ = "0.1.0"
