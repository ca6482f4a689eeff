"""Forty-Fives, Twenty-Five, Auction Forty-Fives (120) and One Hundred and Ten (seed
003)."""

from .env import env, raw_env
from .rules import FortyFives

__all__ = ["FortyFives", "env", "raw_env"]
