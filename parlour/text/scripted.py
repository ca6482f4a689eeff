"""A scripted text player for tests: the agent spec ``text:scripted``.

`ScriptedAnswerer` is a ``callable(prompt) -> str`` that plays through text alone: it
reads the legal moves from the prompt, picks one at random (seeded) and phrases it in
one of several forms (the name, suit symbols, "queen of spades", "I play the Q of
spades", German card names, thinking aloud before ``MOVE:``). With probability
``bad_rate`` it answers badly instead — garbage, two moves at once, or a move that is
not legal — to exercise the parser's refusals and the retry path. It records what it
meant in ``last_intent`` (the move name, or None for a bad answer) and the kind of
answer in ``last_kind``, so tests can check that the parser read what was meant.
"""

from __future__ import annotations

import re

import numpy as np

from ..envs.core.cards import GERMAN_RANKS, GERMAN_SUITS, RANKS, SUIT_SYMBOLS, SUITS
from .parse import describe
from .play import TextAgent

_LEGAL_LINE = re.compile(r"^You are player_\d+\. Legal moves: (.*)$", re.MULTILINE)
_RANK_LONG = {
    "A": "ace", "K": "king", "Q": "queen", "J": "jack", "10": "ten", "9": "nine",
    "8": "eight", "7": "seven", "6": "six", "5": "five", "4": "four", "3": "three",
    "2": "two",
}  # fmt: skip
_SUIT_LONG = dict(zip(SUITS, ("spades", "hearts", "diamonds", "clubs"), strict=True))
_ALL_CARDS = [r + s for s in SUITS for r in RANKS]
GARBAGE = ("", "hmm", "I'm not sure what to do.", "banana", "???", "42 is the answer")


def legal_moves_in(prompt: str) -> list[str]:
    """The legal move names listed in a text prompt (the last list, for a retry)."""
    found = _LEGAL_LINE.findall(prompt)
    if not found:
        raise ValueError("the prompt lists no legal moves")
    return [m.strip() for m in found[-1].split(",")]


def _long(card: str) -> str:
    if card in ("JKH", "JKL"):
        return "the high joker" if card == "JKH" else "the low joker"
    return f"{_RANK_LONG[card[:-1]]} of {_SUIT_LONG[card[-1]]}"


def card_phrases(card: str) -> list[str]:
    """Ways of naming a card: ``QS``, ``Q♠``, ``queen of spades``, ``Q of spades``,
    ``Herz-Ober`` …"""
    if card in ("JKH", "JKL"):
        return [card, _long(card)]
    rank, suit = card[:-1], card[-1]
    return [
        card,
        rank + SUIT_SYMBOLS[SUITS.index(suit)],
        _long(card),
        f"{rank} of {_SUIT_LONG[suit]}",
        f"{GERMAN_SUITS[suit]}-{GERMAN_RANKS.get(rank, rank)}",
    ]


def phrasings(name: str) -> list[str]:
    """Answers that name the legal move ``name`` and nothing else."""
    move = describe(name)
    kind, card = move.kind, move.card
    if kind == "card" and card is not None:
        out = []
        for c in card_phrases(card):
            out += [c, f"I play the {c}."]
        out += [
            name.lower(),
            f"Let me think: AS and KH look strong, but not now. MOVE: {name}",
        ]
        return out
    if kind in ("rob", "discard", "zwang", "top", "bottom") and card is not None:
        spellings = card_phrases(card)
        c = spellings[len(name) % len(spellings)]  # the spelling varies with the name
        return {
            "rob": [name, f"rob {c}", f"I rob, burying the {_long(card)}"],
            "discard": [name, f"discard {c}", f"I discard the {_long(card)}"],
            "zwang": [name, f"{c} with Zwang", f"I lead the {_long(card)}, Zwang!"],
            "top": [name, f"{c} at the top", f"lay the {_long(card)} on the top end"],
            "bottom": [name, f"{c} at the bottom", f"{_long(card)} on the bottom"],
        }[kind]
    if kind == "bid":
        return [name, f"bid {move.value}", f"I bid {move.value}."]
    if kind == "trump" and move.value in _SUIT_LONG:
        suit = _SUIT_LONG[move.value]
        return [name, suit, f"I name {suit} as trumps"]
    words = {
        "norob": ["norob", "no rob", "I don't rob."],
        "pass": ["pass", "I pass."],
        "hold": ["hold", "I hold."],
        "done": ["done", "I'm done."],
        "roll": ["roll", "I roll again."],
        "stand": ["stand", "I stand."],
    }
    return words.get(kind, [name])


class ScriptedAnswerer:
    """A seeded ``callable(prompt) -> str`` that plays random legal moves by text,
    sometimes answering badly (``bad_rate``)."""

    def __init__(self, seed: int | None = None, bad_rate: float = 0.2):
        if not 0.0 <= bad_rate < 1.0:
            raise ValueError(f"bad_rate must be in [0, 1), got {bad_rate!r}")
        self.bad_rate = bad_rate
        self.rng = np.random.default_rng(seed)
        self.last_intent: str | None = None
        self.last_kind = ""

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def _pick(self, options: list[str]) -> str:
        return options[int(self.rng.integers(len(options)))]

    def __call__(self, prompt: str) -> str:
        legal = legal_moves_in(prompt)
        if self.rng.random() < self.bad_rate:
            return self._bad(legal)
        move = self._pick(legal)
        self.last_intent, self.last_kind = move, "good"
        return self._pick(phrasings(move))

    def _bad(self, legal: list[str]) -> str:
        self.last_intent = None
        kinds = [describe(n) for n in legal]
        how = self._pick(["garbage", "ambiguous", "illegal"])
        cards = [m.card for m in kinds if m.kind == "card"]
        if how == "ambiguous":
            both_ends = sorted(
                {m.card for m in kinds if m.kind == "top"}
                & {m.card for m in kinds if m.kind == "bottom"}
            )
            if both_ends:  # a Domino card that fits both ends, named without one
                self.last_kind = "ambiguous"
                return f"I lay the {self._pick(both_ends)}"
            if len(cards) >= 2:
                a, b = self.rng.choice(len(cards), 2, replace=False)
                self.last_kind = "ambiguous"
                return f"{cards[a]} or {cards[b]}"
        if how == "illegal":
            if cards:
                others = [c for c in _ALL_CARDS if c not in legal]
                self.last_kind = "illegal"
                return f"I play the {self._pick(others)}"
            if {m.kind for m in kinds} <= {"roll", "stand"} and len(kinds) == 1:
                self.last_kind = "illegal"
                return "stand" if kinds[0].kind == "roll" else "roll"
        self.last_kind = "garbage"
        return self._pick(list(GARBAGE))


def scripted_agent(seed: int | None = None, bad_rate: float = 0.2) -> TextAgent:
    """The ``text:scripted`` agent: a `TextAgent` around a `ScriptedAnswerer`, with two
    retries and the random fallback."""
    return TextAgent(
        ScriptedAnswerer(seed, bad_rate), seed=seed, retries=2, spec="text:scripted"
    )


__all__ = [
    "ScriptedAnswerer",
    "card_phrases",
    "legal_moves_in",
    "phrasings",
    "scripted_agent",
]
