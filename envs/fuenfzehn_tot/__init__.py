"""Fünfzehn – tot, the dice game (seed 002)."""

from .env import env, raw_env
from .rules import FuenfzehnTot

__all__ = ["FuenfzehnTot", "env", "raw_env"]
