"""Fünfzehnern: 4 or 3 players, strict or relaxed lead rules, Zwang,
sessions."""

from ..core.record import GameRecord
from .env import env, raw_env
from .rules import Fuenfzehnern

# The game's registration (envs/core/record.py; docs/adding_a_game.md).
GAME = GameRecord(
    name="fuenfzehnern_v0",
    title="Fünfzehnern",
    package=__name__,
    variants=(
        {"players": 4},
        {"players": 3, "removed_suit": "S", "lead_rules": "relaxed"},
        {
            "lead_rules": "relaxed",
            "tying_scoring": True,
            "episode": "match",
            "num_hands": 2,
        },
        {"players": 3, "unbeatable_duty_on_first_suit": False, "episode": "match"},
    ),
    heuristic="parlour.agents.fuenfzehnern:FuenfzehnernHeuristic",
    extra_agents="parlour.agents.solver.fuenfzehnern:make_agent",
    extra_kinds=("solver", "pimc:N"),
    pays_as_it_goes=True,
    batched="parlour.envs.batch.fuenfzehnern:FuenfzehnernBatch",
    expert="parlour.envs.fuenfzehnern.hooks:expert",
    decided_by="parlour.envs.core.record:decided_by_points",
    text_view="parlour.text.views:fuenfzehnern",
    text_rules="parlour.text.rules:fuenfzehnern",
    key_rules="parlour.text.rules:fuenfzehnern_key_rules",
    random_deal="parlour.envs.fuenfzehnern.hooks:random_deal",
    hidden_twins="parlour.envs.fuenfzehnern.hooks:hidden_twins",
)

__all__ = ["GAME", "Fuenfzehnern", "env", "raw_env"]
