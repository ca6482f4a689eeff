"""German Whist and Honeymoon Whist (seed 004)."""

from .env import env, raw_env
from .rules import GermanWhist

__all__ = ["GermanWhist", "env", "raw_env"]
