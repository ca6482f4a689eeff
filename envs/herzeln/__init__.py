"""Herzeln, the eight-contract partie for 3 and 4 players (seed 001)."""

from .env import env, raw_env
from .rules import CONTRACTS, Herzeln

__all__ = ["CONTRACTS", "Herzeln", "env", "raw_env"]
