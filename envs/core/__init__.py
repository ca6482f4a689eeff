"""The shared core: cards, the engine protocol, deal validation and the generic AEC
adapter."""

from .aec import ParlourAECEnv
from .engine import CHANCE, TERMINAL, Game, IllegalActionError

__all__ = ["CHANCE", "TERMINAL", "Game", "IllegalActionError", "ParlourAECEnv"]
