"""What several benchmark scripts share (imported as ``_common``: a script's folder is
on ``sys.path`` when Python runs it)."""

from __future__ import annotations

from typing import Any


def config_summary(config: Any) -> dict[str, Any]:
    """The training-config fields that set a training benchmark's speed, for its
    report row."""
    return {
        "n_envs": config.n_envs,
        "n_steps": config.n_steps,
        "net_arch": list(config.net_arch),
        "n_epochs": config.n_epochs,
        "batch_size": config.batch_size,
        "opponents": dict(config.opponents),
    }


#: the trick games whose search has a compiled twin: env name -> (label, solver module)
COMPILED_SEARCHES = {
    "fuenfzehnern_v0": ("Fünfzehnern", "fuenfzehnern"),
    "forty_fives_v0": ("Forty-Fives", "forty_fives"),
    "herzeln_v0": ("Herzeln", "herzeln"),
}


def search_backend(env_name: str) -> str:
    """The backend of ``env_name``'s trick-play search (``PARLOUR_JIT``), its compiled
    code loaded now rather than in the first timed solve."""
    from parlour.agents.solver.backend import compiled_module, requested_backend

    module = COMPILED_SEARCHES[env_name][1]
    jit = compiled_module(
        requested_backend(), f"parlour.agents.solver.{module}_jit", "search"
    )
    if jit is None:
        return "python"
    jit.warm_up()
    return "numba"
