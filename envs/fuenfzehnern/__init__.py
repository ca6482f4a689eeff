"""Fünfzehnern (seed 000): 4 or 3 players, strict or relaxed lead rules, Zwang,
sessions."""

from .env import env, raw_env
from .rules import Fuenfzehnern

__all__ = ["Fuenfzehnern", "env", "raw_env"]
