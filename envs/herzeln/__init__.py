"""Herzeln, the eight-contract partie for 3 and 4 players."""

from ..core.record import GameRecord
from .env import env, raw_env
from .rules import CONTRACTS, Herzeln

# The game's registration (envs/core/record.py; docs/adding_a_game.md).
GAME = GameRecord(
    name="herzeln_v0",
    title="Herzeln",
    package=__name__,
    variants=(
        {"players": 4},
        {"players": 3, "contract": "no_hearts"},
        {"players": 3, "contract": "domino"},
        {"players": 4, "contract": "domino", "domino_layout": "per_suit_rows"},
        {"players": 4, "contract": "king_of_hearts", "early_end": True},
    ),
    heuristic="parlour.agents.herzeln:HerzelnHeuristic",
    extra_agents="parlour.agents.solver.herzeln:make_agent",
    extra_kinds=("solver", "pimc:N"),
    pays_as_it_goes=True,
    batched="parlour.envs.batch.herzeln:HerzelnBatch",
    expert="parlour.envs.herzeln.hooks:expert",
    decided_by="parlour.envs.core.record:decided_by_points",
    text_view="parlour.text.views:herzeln",
    text_rules="parlour.text.rules:herzeln",
    key_rules="parlour.text.rules:herzeln_key_rules",
    random_deal="parlour.envs.herzeln.hooks:random_deal",
    hidden_twins="parlour.envs.herzeln.hooks:hidden_twins",
)

__all__ = ["GAME", "CONTRACTS", "Herzeln", "env", "raw_env"]
