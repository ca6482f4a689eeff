"""Fünfzehn – tot, the dice game."""

from ..core.record import GameRecord
from .env import env, raw_env
from .rules import MAX_PLAYERS, MIN_PLAYERS, FuenfzehnTot

# The game's registration (envs/core/record.py; docs/adding_a_game.md).
GAME = GameRecord(
    name="fuenfzehn_tot_v0",
    title="Fünfzehn – tot",
    package=__name__,
    variants=(
        {"players": 2},
        {"players": 4, "matches": 5, "auto_forced_moves": True, "zero_sum": False},
        {
            "players": 5,
            "matches": 3,
            "auto_stand_at_15_half1": True,
            "half2_bust": "ends_round",
            "all_bust": "next_starter",
        },
        {"players": 6, "matches": 2},
        {"players": 3, "matches": 4, "rule1": False, "rule2": False},
    ),
    heuristic="parlour.agents.fuenfzehn_tot:OptimalAgent",
    extra_agents="parlour.agents.fuenfzehn_tot:make_agent",
    extra_kinds=("optimal", "threshold:N"),
    players=(MIN_PLAYERS, MAX_PLAYERS),
    perfect_information=True,
    tips_studies=("claims", "seat_order"),
    tips_deal_note='Here a "deal" is one env seed: the dice of a whole game.',
    exact_yardstick="parlour.training.yardsticks:AGAINST_OPTIMAL",
    expert="parlour.envs.fuenfzehn_tot.hooks:expert",
    batched="parlour.envs.batch.fuenfzehn_tot:FuenfzehnTotBatch",
    decided_by="parlour.envs.core.record:decided_by_win",
    text_view="parlour.text.views:fuenfzehn_tot",
    text_rules="parlour.text.rules:fuenfzehn_tot",
    key_rules="parlour.text.rules:fuenfzehn_tot_key_rules",
    no_deal="dice game: no cards; scripted dice and the observation's "
    "independence of future dice are tested in tests/test_fuenfzehn_tot.py",
)

__all__ = ["GAME", "FuenfzehnTot", "env", "raw_env"]
