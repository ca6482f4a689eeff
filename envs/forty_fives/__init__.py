"""Forty-Fives, Twenty-Five, Auction Forty-Fives (120) and One Hundred and Ten (seed
003)."""

from ..core.record import GameRecord
from .env import env, raw_env
from .rules import FortyFives

# The game's registration (envs/core/record.py; docs/adding_a_game.md).
GAME = GameRecord(
    name="forty_fives_v0",
    title="Forty-Fives",
    package=__name__,
    variants=(
        {"players": 4},
        {"players": 2, "variant": "twenty_five"},
        {"players": 3, "episode": "deal", "void_must_trump": False},
        {"players": 6, "episode": "deal", "packets": "2+3"},
        {"players": 4, "variant": "auction", "episode": "deal"},
        {"players": 6, "variant": "auction", "episode": "deal", "bidder_leads": False},
        {"players": 2, "variant": "one_ten", "target": 30, "max_deals": 3},
    ),
    heuristic="parlour.agents.forty_fives:FortyFivesHeuristic",
    extra_agents="parlour.agents.solver.forty_fives:make_agent",
    extra_kinds=("solver", "pimc:N"),
    batched="parlour.envs.batch.forty_fives:FortyFivesBatch",
    expert="parlour.envs.forty_fives.hooks:expert",
    decided_by="parlour.envs.forty_fives.hooks:decided_by",
    text_view="parlour.text.views:forty_fives",
    text_rules="parlour.text.rules:forty_fives",
    key_rules="parlour.text.rules:forty_fives_key_rules",
    random_deal="parlour.envs.forty_fives.hooks:random_deal",
    hidden_twins="parlour.envs.forty_fives.hooks:hidden_twins",
)

__all__ = ["GAME", "FortyFives", "env", "raw_env"]
