"""The ``pretrained`` agents: trained checkpoints shipped inside the package.

Each game with a shipped agent has a directory ``parlour/models/<env>/`` holding

* ``manifest.json`` and ``weights.pt``: an ordinary checkpoint (`training.checkpoint`),
  so ``ckpt:parlour/models/<env>`` loads exactly what ``pretrained`` loads, with both
  SHA-256 checks and never an unpickled object. Only the actor's tensors are kept (the
  optimiser, the value head and the opponent snapshots are for training, not play),
  which keeps a model under a megabyte. The manifest adds a ``pretrained`` field: the
  run it came from, the command that made it and its final evaluation figures;
* ``command.sh``: the commands that trained, evaluated and exported it;
* ``card.md``: the agent card (how it was trained, what it beats, where it is weak).

``python -m parlour.training.pretrained RUN --command-file F --eval-json E ...`` writes
such a directory from a run (`export`); ``parlour list`` shows the headline figures.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from . import checkpoint as ckpt_io

COMMAND = "command.sh"
CARD = "card.md"
_ACTOR_PREFIXES = ("mlp_extractor.policy_net.", "action_net.")
# manifest fields that `checkpoint.save` writes itself
_WRITTEN_BY_SAVE = ("format", "format_version", "weights_sha256", "versions")


def models_root() -> Path:
    """The directory of the shipped models, in a source tree or an installed package."""
    from importlib import resources

    return Path(str(resources.files("parlour"))) / "models"


def shipped() -> dict[str, Path]:
    """Env name -> model directory, for every env with a shipped agent."""
    root = models_root()
    if not root.is_dir():
        return {}
    return {
        d.name: d
        for d in sorted(root.iterdir())
        if d.is_dir() and (d / ckpt_io.MANIFEST).is_file()
    }


def model_dir(env_name: str) -> Path:
    """The shipped model of an env; ValueError naming the envs that have one."""
    models = shipped()
    if env_name not in models:
        having = ", ".join(models) or "none"
        raise ValueError(
            f"no pretrained agent is shipped for {env_name}; envs that have one: "
            f"{having}"
        )
    return models[env_name]


def manifest(env_name: str) -> dict[str, Any]:
    """The shipped model's manifest (read only, not verified: `agent` verifies)."""
    return json.loads((model_dir(env_name) / ckpt_io.MANIFEST).read_text())


def _format_options(options: Mapping[str, Any]) -> str:
    return " ".join(f"-o {k}={v}" for k, v in options.items())


def check_options(env_name: str, env_options: Mapping[str, Any] | None) -> None:
    """Raise ValueError (one line) unless the env options describe the game the
    shipped agent was trained for; the message says which ``-o`` to write."""
    from .. import envs

    trained = manifest(env_name).get("game_options", {})
    asked = envs.game_options(env_name, dict(env_options or {}))
    differ = sorted(
        k
        for k in {*trained, *asked}
        if trained.get(k) != asked.get(k)
        and (trained.get(k) is not None or asked.get(k) is not None)
    )
    if differ:
        want = _format_options({k: trained.get(k) for k in differ})
        got = ", ".join(f"{k}={asked.get(k)}" for k in differ)
        raise ValueError(
            f"the pretrained {env_name} agent was trained for {want}, not {got}: "
            "no pretrained agent is shipped for these options"
        )


def agent(
    env_name: str,
    env_options: Mapping[str, Any] | None = None,
    seed: int | None = None,
    deterministic: bool = True,
):
    """The shipped agent of an env (a `CheckpointAgent` named ``pretrained``)."""
    from ..agents.checkpoint import CheckpointAgent

    directory = model_dir(env_name)
    check_options(env_name, env_options)
    loaded = CheckpointAgent(
        str(directory), env_name, env_options, seed=seed, deterministic=deterministic
    )
    loaded.spec = "pretrained" + ("" if deterministic else "@sample")
    return loaded


def headline(env_name: str) -> str:
    """One line of the shipped agent's final evaluation, e.g. ``vs heuristic 0.532
    [0.517, 0.548] of 4000 games``."""
    info = manifest(env_name).get("pretrained", {})
    parts = []
    for row in info.get("evaluation", []):
        win = row["win_rate"]
        parts.append(
            f"vs {row['field']} {win['estimate']:.3f} "
            f"[{win['low']:.3f}, {win['high']:.3f}]"
        )
    if not parts:
        return "no evaluation recorded"
    games = info["evaluation"][0]["games"]
    even = 1 / info["evaluation"][0].get("sides", 2)
    return f"{'; '.join(parts)} (win share, even {even:.2f}, {games:,} games)"


def _evaluation_row(path: Path, env_name: str) -> dict[str, Any]:
    data = json.loads(path.read_text())
    if data.get("env") != env_name:
        raise ValueError(f"{path} evaluates {data.get('env')}, not {env_name}")
    keep = ("field", "games", "duplicate", "seed", "sides", "win_rate")
    row = {k: data[k] for k in keep if k in data}
    for k in ("mean_score", "paired_margin"):
        if k in data:
            row[k] = data[k]
    return row


def export(
    source: str | Path,
    dest_root: str | Path | None = None,
    command: str = "",
    evaluations: Sequence[str | Path] = (),
    card: str | Path | None = None,
) -> Path:
    """Write the actor of a checkpoint (or a run's latest) as ``dest_root/<env>/``.

    ``evaluations`` are ``parlour eval --json`` files of the same checkpoint, kept in
    the manifest; ``command`` goes to ``command.sh``; ``card`` is copied to
    ``card.md``. Returns the model directory.
    """
    loaded = ckpt_io.load(source)
    rows = [_evaluation_row(Path(p), loaded.env_name) for p in evaluations]
    actor = {
        k: v.detach().clone()
        for k, v in loaded.tensors["policy"].items()
        if k.startswith(_ACTOR_PREFIXES)
    }
    body = {
        k: v
        for k, v in loaded.manifest.items()
        if k not in _WRITTEN_BY_SAVE and k != "manifest_sha256"
    }
    body["pretrained"] = {
        "source_weights_sha256": loaded.manifest["weights_sha256"],
        "source_step": loaded.step,
        "command": command,
        "evaluation": rows,
    }
    root = Path(dest_root) if dest_root is not None else models_root()
    out = ckpt_io.save(root / loaded.env_name, {"policy": actor}, body)
    (out / COMMAND).write_text(command.rstrip("\n") + "\n")
    if card is not None:
        shutil.copyfile(card, out / CARD)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Export a run's checkpoint as a shipped model (a maintainer's tool)."""
    parser = argparse.ArgumentParser(
        prog="python -m parlour.training.pretrained",
        description="write a checkpoint's actor into parlour/models/<env>/",
    )
    parser.add_argument("source", help="checkpoint or run directory")
    parser.add_argument("--out", help="models root (default: parlour/models)")
    parser.add_argument(
        "--command-file", required=True, help="file with the commands that made it"
    )
    parser.add_argument(
        "--eval-json", nargs="*", default=[], help="parlour eval --json outputs"
    )
    parser.add_argument("--card", help="the agent card (markdown)")
    args = parser.parse_args(argv)
    try:
        out = export(
            args.source,
            args.out,
            Path(args.command_file).read_text(),
            args.eval_json,
            args.card,
        )
    except (ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    size = sum(p.stat().st_size for p in out.iterdir())
    print(f"wrote {out} ({size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
