"""Lenient reading of a text answer as one of the legal moves.

`parse_move(answer, legal, game)` accepts a move name in any spelling the engine takes
(``"QS"``, ``"q♠"``, ``"bid:20"``), and free text that names one legal move:
``"queen of spades"``, ``"I play the Q of spades"``, ``"Herz-Ober"``, ``"bid 20"``,
``"roll"`` / ``"stand"``, ``"rob, burying the 7C"``, ``"no rob"``, ``"pass"``,
``"QH at the top"``. If the answer holds ``MOVE:`` (any case), only the text after the
last one counts, so a model may think aloud first.

Exactly one legal move must match. Moves are matched in two tiers: first strictly (a
card answer matches the plain card move, and a move with a modifier — rob, discard,
Zwang, an end of the Domino line — needs its word), then, if nothing matched strictly,
a bare card also matches the discard or Domino move of that card. Anything else is
refused with a one-line reason naming the legal moves: ``"ambiguous"`` (several legal
moves match), ``"illegal"`` (the answer names a move that is not legal now) or
``"unreadable"``.

Legal moves are described from their names alone (``docs/conventions.md``), so the
parser knows no game and needs no change when an engine offers its moves in another
order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..envs.core.cards import SUITS

# --- the vocabulary -------------------------------------------------------------------
_RANK_WORDS = {
    "ace": "A", "daus": "A", "king": "K", "könig": "K", "konig": "K", "koenig": "K",
    "queen": "Q", "ober": "Q", "jack": "J", "knave": "J", "unter": "J",
    "ten": "10", "nine": "9", "eight": "8", "seven": "7", "six": "6", "five": "5",
    "four": "4", "three": "3", "two": "2", "deuce": "2",
}  # fmt: skip
_SUIT_WORDS = {
    "spade": "S", "spades": "S", "laub": "S", "leaves": "S", "♠": "S",
    "heart": "H", "hearts": "H", "herz": "H", "♥": "H",
    "diamond": "D", "diamonds": "D", "schellen": "D", "bells": "D", "♦": "D",
    "club": "C", "clubs": "C", "eichel": "C", "acorns": "C", "♣": "C",
}  # fmt: skip
_RANK_ANY = "|".join(sorted(_RANK_WORDS, key=len, reverse=True)) + r"|10|[2-9]|[akqjt]"
_SUIT_ANY = "|".join(sorted(_SUIT_WORDS, key=len, reverse=True))
_SYMBOLS = "♠♥♦♣"

# "QS", "10H", "Q♠", "10♥": compact names; upper case only, so that English words such
# as "as" or "ad" are not read as cards ("qs" alone is read by the exact match first).
_COMPACT = re.compile(r"(?<![\w♠♥♦♣])(10|[2-9AKQJT])([SHDC♠♥♦♣])(?![\w])")
# "queen of spades", "Q of spades", "10 of hearts", "queen spades", "Q♠" with a space
_LONG = re.compile(
    rf"(?<![\w])({_RANK_ANY})\s*(?:of\s+(?:the\s+)?)?({_SUIT_ANY})(?![\w])",
    re.IGNORECASE,
)
# German order: "Herz-Ober", "Laub Daus", "Schellen-10"
_GERMAN = re.compile(
    r"(?<![\w])(laub|herz|schellen|eichel)[-\s]+"
    r"(daus|könig|konig|koenig|ober|unter|10|[2-9])(?![\w])",
    re.IGNORECASE,
)
_JOKER = re.compile(
    r"(?<![\w])(jkh|jkl|high\s+joker|low\s+joker|joker\s+high|joker\s+low)(?![\w])",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"(?<![\w.])(\d+)(?!\w|\.\d)")
_STANDALONE_SUIT = re.compile(rf"(?<![\w])({_SUIT_ANY})(?![\w])", re.IGNORECASE)
_MARKER = re.compile(r"move\s*:", re.IGNORECASE)

#: keyword -> regex of the words that say it
_KEYWORDS = {
    "norob": r"no\s*-?\s*rob|don'?t\s+rob|do\s+not\s+rob|not\s+rob\w*|decline\w*|"
    r"won'?t\s+rob|refuse\w*",
    "rob": r"rob|robs|robbing|steal",
    "pass": r"pass|passes|passing",
    "hold": r"hold|holds",
    "done": r"done|finish\w*|no\s+more|that'?s\s+all|stop\s+discarding|"
    r"keep\s+the\s+rest",
    "discard": r"discard\w*|throw\s+away|bury",
    "zwang": r"zwang",
    "top": r"top|upper",
    "bottom": r"bottom|lower",
    "roll": r"roll\w*|again|another|throw|hit",
    "stand": r"stand|stands|stay|stop|keep",
    "bid": r"bid|bids|bidding",
    "trump": r"trump|trumps",
}
_KEYWORD_RE = {
    k: re.compile(rf"(?<![\w])(?:{v})(?![\w])", re.IGNORECASE)
    for k, v in _KEYWORDS.items()
}
#: move kinds that need their word in the strict tier (a bare card never picks them)
_MODIFIERS = ("rob", "discard", "zwang", "top", "bottom")
#: keywords that are move names by themselves
_NAMED_WORDS = ("norob", "pass", "hold", "done", "roll", "stand")


@dataclass(frozen=True)
class Parsed:
    """The outcome of reading one answer: ``action`` (an id) when ``status`` is
    ``"ok"``, else None and ``message`` saying why, with the legal moves."""

    status: str  # "ok" | "ambiguous" | "illegal" | "unreadable"
    action: int | None
    message: str


@dataclass(frozen=True)
class _Move:
    kind: str  # card rob norob pass bid hold trump discard done zwang top bottom …
    card: str | None = None
    value: str | None = None


def describe(name: str) -> _Move:
    """A legal move's kind, card and value, read from its conventional name."""
    low = name.lower()
    if low in ("roll", "stand", "pass", "norob", "hold", "done"):
        return _Move(low)
    head, sep, arg = name.partition(":")
    if sep:
        head = head.lower()
        if head == "bid":
            return _Move("bid", value=arg)
        if head == "trump":
            return _Move("trump", value=arg.upper())
        if head in ("rob", "discard", "zwang"):
            return _Move(head, card=arg.upper())
        return _Move(name)  # an unknown form: matched only by its exact name
    card, at, end = name.partition("@")
    if at:
        return _Move(end.lower(), card=card.upper())
    return _Move("card", card=name.upper())


@dataclass
class _Reading:
    cards: list[str]
    words: set[str]
    numbers: set[str]
    suits: set[str]


def _card(rank: str, suit: str) -> str:
    rank = _RANK_WORDS.get(rank.lower(), rank.upper())
    if rank == "T":
        rank = "10"
    return rank + _SUIT_WORDS.get(suit.lower(), suit.upper())


def _read(text: str) -> _Reading:
    """The cards, keywords, numbers and suits an answer mentions."""
    cards: list[str] = []
    spans: list[tuple[int, int]] = []

    def take(match: re.Match, card: str) -> None:
        if any(a < match.end() and match.start() < b for a, b in spans):
            return  # part of a card already read
        spans.append(match.span())
        if card not in cards:
            cards.append(card)

    for m in _JOKER.finditer(text):
        word = m.group(1).lower()
        take(m, "JKH" if word == "jkh" or "high" in word else "JKL")
    for m in _GERMAN.finditer(text):
        take(m, _card(m.group(2), m.group(1)))
    for m in _COMPACT.finditer(text):
        suit = m.group(2)
        take(
            m,
            _card(
                m.group(1), SUITS[_SYMBOLS.index(suit)] if suit in _SYMBOLS else suit
            ),
        )
    for m in _LONG.finditer(text):
        rank = m.group(1)
        # a bare "a" is the English article ("a spade"), not an ace
        if rank.lower() == "a" and " of" not in m.group(0).lower():
            continue
        take(m, _card(rank, m.group(2)))
    rest = list(text)
    for a, b in spans:
        rest[a:b] = " " * (b - a)
    rest_text = "".join(rest)
    words = {k for k, rx in _KEYWORD_RE.items() if rx.search(rest_text)}
    if "norob" in words:
        words.discard("rob")  # "don't rob" says rob too
    numbers = set(_NUMBER.findall(rest_text))
    suits = {
        _SUIT_WORDS[m.group(1).lower()] for m in _STANDALONE_SUIT.finditer(rest_text)
    }
    return _Reading(cards, words, numbers, suits)


def _matches(move: _Move, r: _Reading, strict: bool) -> bool:
    kind, card = move.kind, move.card
    if kind == "card":
        return card in r.cards and not (r.words & set(_MODIFIERS))
    if kind in ("norob", "pass", "hold", "done", "roll", "stand"):
        return kind in r.words
    if kind == "bid":
        return move.value in r.numbers and "pass" not in r.words
    if kind == "trump":
        return move.value in r.suits and not r.cards
    if kind in ("rob", "zwang"):
        return kind in r.words and card in r.cards
    if kind in ("discard", "top", "bottom"):
        if card not in r.cards:
            return False
        if strict:
            return kind in r.words
        others = set(_MODIFIERS) - {kind}
        return not (r.words & others)
    return False


def _clean(text: str) -> str:
    return text.strip().strip("`'\"*.!,;()[]{}<> \n\t")


def legal_list(names: Sequence[str]) -> str:
    """The legal moves as the refusal messages and prompts list them."""
    return ", ".join(names)


def parse_move(answer: Any, legal: Sequence[int], game: Any) -> Parsed:
    """Read ``answer`` as one of the ``legal`` action ids of ``game`` (an engine with
    ``action_name`` and ``action_id``)."""
    names = [game.action_name(a) for a in legal]
    listing = legal_list(names)
    if not isinstance(answer, str):
        return Parsed(
            "unreadable",
            None,
            f"the answer must be text, got {type(answer).__name__}; legal moves: "
            f"{listing}",
        )
    text = answer
    marks = list(_MARKER.finditer(text))
    if marks:
        text = text[marks[-1].end() :]
    exact = _clean(text)
    if exact:
        try:
            action = game.action_id(exact)
        except (ValueError, KeyError, IndexError):
            action = None
        if action is not None and action in legal:
            return Parsed("ok", action, f"read {exact!r} as {game.action_name(action)}")
    reading = _read(text)
    moves = [describe(n) for n in names]
    for strict in (True, False):
        hits = [
            a for a, m in zip(legal, moves, strict=True) if _matches(m, reading, strict)
        ]
        if not hits and not strict:
            hits = _word_only(legal, moves, reading)
        if len(hits) == 1:
            name = game.action_name(hits[0])
            return Parsed("ok", hits[0], f"read {_short(answer)} as {name}")
        if len(hits) > 1:
            which = ", ".join(game.action_name(a) for a in hits)
            return Parsed(
                "ambiguous",
                None,
                f"{_short(answer)} fits several legal moves ({which}); answer with "
                f"exactly one of: {listing}",
            )
    named = list(reading.cards) + sorted(reading.words & set(_NAMED_WORDS))
    if "bid" in reading.words or any(m.kind == "bid" for m in moves):
        named += sorted(reading.numbers, key=int)
    if named:
        return Parsed(
            "illegal",
            None,
            f"{', '.join(named)} is not a legal move now; legal moves: {listing}",
        )
    return Parsed(
        "unreadable",
        None,
        f"could not read a move in {_short(answer)}; legal moves: {listing}",
    )


def _word_only(legal: Sequence[int], moves: list[_Move], r: _Reading) -> list[int]:
    """A card move's word without a card ("rob", "zwang", "discard"): the legal moves
    of that kind, so that one is taken and several are ambiguous."""
    if r.cards:
        return []
    kinds = r.words & {"rob", "zwang", "discard"}
    return [a for a, m in zip(legal, moves, strict=True) if m.kind in kinds]


def _short(answer: str, limit: int = 60) -> str:
    one = " ".join(answer.split())
    return repr(one if len(one) <= limit else one[: limit - 1] + "…")


__all__ = ["Parsed", "describe", "legal_list", "parse_move"]
