"""Text play for language-model agents: every game as names in, names out.

- `TextEnv(env_name, **options)`: a game played one text answer at a time.
- `TextAgent(ask)`: an `Agent` around any ``callable(prompt) -> str``, for the arena,
  the league and the tips harness; ``text:scripted`` is a scripted one for tests.
- `prompt(game, state, seat, legal)`: the prompt (rules summary of the variant, what
  the seat can see, the legal moves by name); `parse_move` reads an answer leniently.
- `play_game` records a game (prompts, answers, every move, the scores) for JSONL,
  `run_text_arena` records every game of an arena run; `replay` plays a record again
  and checks the scores.

See ``docs/text_agents.md``.
"""

from __future__ import annotations

from .env import TextEnv, TextStep
from .parse import Parsed, parse_move
from .play import (
    Forfeit,
    TextAgent,
    engine_state,
    forfeit_scores,
    load_records,
    play_game,
    prompt,
    replay,
    run_text_arena,
    save_records,
)
from .rules import summary
from .scripted import ScriptedAnswerer, scripted_agent
from .views import view

__all__ = [
    "Forfeit",
    "Parsed",
    "ScriptedAnswerer",
    "TextAgent",
    "TextEnv",
    "TextStep",
    "engine_state",
    "forfeit_scores",
    "load_records",
    "parse_move",
    "play_game",
    "prompt",
    "replay",
    "run_text_arena",
    "save_records",
    "scripted_agent",
    "summary",
    "view",
]
