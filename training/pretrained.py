"""The ``pretrained`` agents: trained checkpoints shipped inside the package.

Each shipped agent has a directory ``parlour/models/<name>/``: the env's name for the
env's default options (``german_whist_v0``), followed by the options it was trained for
otherwise (``german_whist_v0.honeymoon``); ``pretrained`` plays the one whose options
are the game's. The directory holds

* ``manifest.json`` and ``weights.pt``: an ordinary checkpoint (`training.checkpoint`),
  so ``ckpt:parlour/models/<name>`` loads exactly what ``pretrained`` loads, with both
  SHA-256 checks and never an unpickled object. Only the actor's tensors are kept (the
  optimiser, the value head and the opponent snapshots are for training, not play),
  which keeps a model under a megabyte. The manifest adds a ``pretrained`` field: the
  run it came from, the command that made it and its final evaluation figures, and
  ``suit_average`` where the model plays its policy averaged over the renamings of the
  suits (German and Honeymoon Whist: `parlour.training.policy.SuitAverage`); its
  ``fingerprint`` is the rules fingerprint of the env now (`export` refuses a run
  trained on other rules), and ``tests/test_pretrained_shipped.py`` refuses a shipped
  model whose env's rules have changed since;
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


def _read_manifest(directory: Path) -> dict[str, Any]:
    return json.loads((directory / ckpt_io.MANIFEST).read_text())


def shipped() -> dict[str, Path]:
    """Model name -> model directory, for every shipped agent. A model's name is its
    env's (``german_whist_v0``) when it plays the env's default options, else the env's
    followed by the options it differs in (``german_whist_v0.honeymoon``)."""
    root = models_root()
    if not root.is_dir():
        return {}
    return {
        d.name: d
        for d in sorted(root.iterdir())
        if d.is_dir() and (d / ckpt_io.MANIFEST).is_file()
    }


def named(name: str) -> Path:
    """A shipped model by its name (`shipped`); ValueError naming the models."""
    models = shipped()
    if name not in models:
        raise ValueError(
            f"no pretrained agent named {name} is shipped; shipped: "
            f"{', '.join(models) or 'none'}"
        )
    return models[name]


def models_of(env_name: str) -> list[Path]:
    """The model directories of an env, the default options' model first."""
    found = [d for d in shipped().values() if _read_manifest(d)["env"] == env_name]
    return sorted(found, key=lambda d: (d.name != env_name, d.name))


def _non_default(env_name: str, game_options: Mapping[str, Any]) -> dict[str, Any]:
    """The game options that differ from the env's defaults, sorted by name."""
    from .. import envs

    defaults = envs.game_options(env_name)
    return {k: v for k, v in sorted(game_options.items()) if defaults.get(k) != v}


def model_name(env_name: str, game_options: Mapping[str, Any]) -> str:
    """The directory name of a model trained for ``game_options``."""
    differ = _non_default(env_name, game_options).values()
    return ".".join([env_name, *map(str, differ)])


def _format_options(options: Mapping[str, Any]) -> str:
    return " ".join(f"-o {k}={v}" for k, v in options.items())


def _differing(trained: Mapping[str, Any], asked: Mapping[str, Any]) -> list[str]:
    return sorted(
        k
        for k in {*trained, *asked}
        if trained.get(k) != asked.get(k)
        and (trained.get(k) is not None or asked.get(k) is not None)
    )


def model_dir(env_name: str, env_options: Mapping[str, Any] | None = None) -> Path:
    """The shipped model that plays ``env_name`` with ``env_options`` (the env's
    defaults when None). ValueError, one line, naming the envs that have a model, or
    the options this env's models were trained for."""
    from .. import envs

    found = models_of(env_name)
    if not found:
        having = sorted({_read_manifest(d)["env"] for d in shipped().values()})
        raise ValueError(
            f"no pretrained agent is shipped for {env_name}; envs that have one: "
            f"{', '.join(having) or 'none'}"
        )
    asked = envs.game_options(env_name, dict(env_options or {}))
    trained = [_read_manifest(d).get("game_options", {}) for d in found]
    for directory, options in zip(found, trained, strict=True):
        if not _differing(options, asked):
            return directory
    wants, gots = [], set()
    for options in trained:
        differ = _differing(options, asked)
        wants.append(_format_options({k: options.get(k) for k in differ}))
        gots.update(f"{k}={asked.get(k)}" for k in differ)
    which = "agent was" if len(found) == 1 else "agents were"
    raise ValueError(
        f"the pretrained {env_name} {which} trained for {' or '.join(wants)}, not "
        f"{', '.join(sorted(gots))}: no pretrained agent is shipped for these options"
    )


def manifest(
    env_name: str,
    env_options: Mapping[str, Any] | None = None,
    name: str | None = None,
) -> dict[str, Any]:
    """The manifest of the model for these options, or of the model ``name`` (read
    only, not verified: `agent` verifies)."""
    return _read_manifest(_model_for(env_name, env_options, name))


def _model_for(
    env_name: str, env_options: Mapping[str, Any] | None, name: str | None
) -> Path:
    """`model_dir`, or the model ``name``, refused for another env."""
    if name is None:
        return model_dir(env_name, env_options)
    directory = named(name)
    plays = _read_manifest(directory)["env"]
    if plays != env_name:
        raise ValueError(f"pretrained:{name} plays {plays}, not {env_name}")
    return directory


def agent(
    env_name: str,
    env_options: Mapping[str, Any] | None = None,
    seed: int | None = None,
    deterministic: bool = True,
    name: str | None = None,
    suit_average: bool | None = None,
):
    """The shipped agent of an env for its options, or the shipped model ``name`` (a
    `CheckpointAgent` named ``pretrained`` or ``pretrained:NAME``); ``suit_average``
    True or False overrides the model's manifest (``@sym``, ``@plain``)."""
    from ..agents.checkpoint import CheckpointAgent
    from ..agents.spec import policy_suffix

    directory = _model_for(env_name, env_options, name)
    loaded = CheckpointAgent(
        str(directory),
        env_name,
        env_options,
        seed=seed,
        deterministic=deterministic,
        suit_average=suit_average,
    )
    loaded.spec = (
        "pretrained"
        + ("" if name is None else f":{name}")
        + policy_suffix(suit_average, not deterministic)
    )
    return loaded


def headline(directory: Path) -> str:
    """One line of a shipped model's final evaluation, e.g. ``vs heuristic 0.532
    [0.517, 0.548] of 4000 games``."""
    rows = _read_manifest(directory).get("pretrained", {}).get("evaluation", [])
    if not rows:
        return "no evaluation recorded"
    same = len({row["games"] for row in rows}) == 1
    parts = []
    for row in rows:
        win = row["win_rate"]
        games = "" if same else f" ({row['games']:,} games)"
        parts.append(
            f"vs {row['field']} {win['estimate']:.3f} "
            f"[{win['low']:.3f}, {win['high']:.3f}]{games}"
        )
    even = 1 / rows[0].get("sides", 2)
    games = f", {rows[0]['games']:,} games" if same else ""
    return f"{'; '.join(parts)} (win share, even {even:.2f}{games})"


def summary(directory: Path) -> str:
    """A shipped model's options and headline figures, on one line (`parlour list`)."""
    info = _read_manifest(directory)
    options = _format_options(_non_default(info["env"], info["game_options"]))
    return f"{options or 'default options'}; {headline(directory)}"


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
    suit_average: bool | None = None,
) -> Path:
    """Write the actor of a checkpoint (or a run's latest) as ``dest_root/<name>/``
    (`model_name`: the env's name, followed by its options where they are not the
    env's defaults).

    ``evaluations`` are ``parlour eval --json`` files of the same checkpoint, kept in
    the manifest; ``command`` goes to ``command.sh``; ``card`` is copied to
    ``card.md``; ``suit_average`` True or False is written into the manifest (None
    keeps the checkpoint's). Returns the model directory.
    """
    from .. import envs

    loaded = ckpt_io.load(source)
    game_options = envs.game_options(
        loaded.env_name, loaded.manifest.get("game_options", {})
    )
    # a model never ships with rules other than this Parlour's
    ckpt_io.check_rules(loaded, loaded.env_name, game_options)
    if suit_average:
        from .policy import check_suit_renaming

        check_suit_renaming(loaded.env_name)
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
    body["fingerprint"] = envs.fingerprint(loaded.env_name, game_options)
    if suit_average is not None:
        body[ckpt_io.SUIT_AVERAGE] = suit_average
    body["pretrained"] = {
        "source_weights_sha256": loaded.manifest["weights_sha256"],
        "source_step": loaded.step,
        "command": command,
        "evaluation": rows,
    }
    root = Path(dest_root) if dest_root is not None else models_root()
    name = model_name(loaded.env_name, loaded.manifest.get("game_options", {}))
    out = ckpt_io.save(root / name, {"policy": actor}, body)
    (out / COMMAND).write_text(command.rstrip("\n") + "\n")
    if card is not None:
        shutil.copyfile(card, out / CARD)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Export a run's checkpoint as a shipped model (a maintainer's tool)."""
    parser = argparse.ArgumentParser(
        prog="python -m parlour.training.pretrained",
        description="write a checkpoint's actor into parlour/models/<name>/",
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
    parser.add_argument(
        "--suit-average",
        action="store_true",
        help="the model plays its policy averaged over the renamings of the suits "
        "(envs whose record has suit_renaming)",
    )
    args = parser.parse_args(argv)
    try:
        out = export(
            args.source,
            args.out,
            Path(args.command_file).read_text(),
            args.eval_json,
            args.card,
            suit_average=True if args.suit_average else None,
        )
    except (ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    size = sum(p.stat().st_size for p in out.iterdir())
    print(f"wrote {out} ({size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
