"""Checkpoints: safe to write, safe to read, and self-describing.

A checkpoint is a directory holding ``weights.pt`` (tensors only: the policy, the
optimiser, the frozen snapshots of the opponent pool) and ``manifest.json`` (env name
and options, observation and action sizes, network shape, config, step count, package
versions, and the SHA-256 of the weights). It is written into a temporary directory and
renamed into place, so an interrupted write never leaves a half checkpoint under the
final name. Loading never unpickles arbitrary objects
(``torch.load(weights_only=True)``) and checks the hash first, so a truncated or corrupt
file, a missing file, or a checkpoint made for another env or other options fails with a
message that names the problem.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

FORMAT = "parlour-checkpoint"
FORMAT_VERSION = 1
WEIGHTS = "weights.pt"
MANIFEST = "manifest.json"
LATEST = "latest.json"


class CheckpointError(ValueError):
    """A checkpoint that is missing, corrupt, or made for something else."""


def package_versions() -> dict[str, str]:
    """Versions of the packages a checkpoint depends on."""
    out = {}
    for name in (
        "parlour",
        "torch",
        "stable-baselines3",
        "sb3-contrib",
        "pettingzoo",
        "gymnasium",
        "numpy",
    ):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON to ``path`` through a temporary file and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=2, sort_keys=True)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes it private; a result file is not secret
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save(
    directory: str | Path, tensors: Mapping[str, Any], manifest: Mapping[str, Any]
) -> Path:
    """Write a checkpoint directory atomically and return its path."""
    import torch

    final = Path(directory)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{final.name}."))
    try:
        tmp.chmod(0o755)  # mkdtemp makes it private
        weights = tmp / WEIGHTS
        torch.save(dict(tensors), weights)
        data = {
            **manifest,
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "weights_sha256": _sha256(weights),
            "versions": package_versions(),
        }
        write_json_atomic(tmp / MANIFEST, data)
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


@dataclass
class Checkpoint:
    """A loaded checkpoint: its manifest and its tensors."""

    path: Path
    manifest: dict[str, Any]
    tensors: dict[str, Any]

    @property
    def env_name(self) -> str:
        return self.manifest["env"]

    @property
    def env_options(self) -> dict[str, Any]:
        return dict(self.manifest.get("env_options", {}))

    @property
    def step(self) -> int:
        return int(self.manifest.get("step", 0))


def resolve(path: str | Path) -> Path:
    """The checkpoint directory for a path: the directory itself, its manifest, or a run
    directory (then the latest checkpoint in it)."""
    p = Path(path)
    if p.is_file() and p.name in (MANIFEST, WEIGHTS):
        p = p.parent
    if (p / LATEST).is_file():  # a run directory
        try:
            latest = json.loads((p / LATEST).read_text())["checkpoint"]
        except (ValueError, KeyError) as err:
            raise CheckpointError(f"{p / LATEST} is corrupt: {err}") from None
        p = p / latest
    if not p.exists():
        raise CheckpointError(f"no checkpoint at {path}: the path does not exist")
    if not p.is_dir():
        raise CheckpointError(
            f"{path} is not a checkpoint: "
            f"expected a directory with {MANIFEST} and {WEIGHTS}"
        )
    return p


def load(path: str | Path) -> Checkpoint:
    """Load and verify a checkpoint; `CheckpointError` says what is wrong."""
    import torch

    directory = resolve(path)
    manifest_path, weights_path = directory / MANIFEST, directory / WEIGHTS
    if not manifest_path.is_file():
        raise CheckpointError(
            f"{directory} has no {MANIFEST}: not a checkpoint or incomplete"
        )
    if not weights_path.is_file():
        raise CheckpointError(
            f"{directory} has no {WEIGHTS}: the checkpoint is incomplete"
        )
    try:
        manifest = json.loads(manifest_path.read_text())
    except ValueError as err:
        raise CheckpointError(
            f"{manifest_path} is corrupt (not valid JSON: {err})"
        ) from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise CheckpointError(f"{manifest_path} is not a Parlour checkpoint manifest")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(
            f"{directory}: checkpoint format version "
            f"{manifest.get('format_version')} is not "
            f"supported (this Parlour reads version {FORMAT_VERSION})"
        )
    digest = _sha256(weights_path)
    if digest != manifest.get("weights_sha256"):
        raise CheckpointError(
            f"{weights_path} is corrupt or truncated: "
            "its SHA-256 does not match the manifest"
        )
    try:
        tensors = torch.load(weights_path, map_location="cpu", weights_only=True)
    except Exception as err:  # torch raises several types for bad archives
        raise CheckpointError(f"{weights_path} cannot be read: {err}") from None
    return Checkpoint(directory, manifest, tensors)


def check_compatible(
    ckpt: Checkpoint,
    env_name: str,
    game_options: Mapping[str, Any],
    observation_size: int,
    num_actions: int,
) -> None:
    """Raise `CheckpointError` unless ``ckpt`` was trained for this env and these
    options."""
    if ckpt.env_name != env_name:
        raise CheckpointError(
            f"checkpoint {ckpt.path} was trained on {ckpt.env_name}, not {env_name}"
        )
    mine, theirs = _canon(game_options), _canon(ckpt.manifest.get("game_options", {}))
    if mine != theirs:
        raise CheckpointError(
            f"checkpoint {ckpt.path} was trained with options {theirs}, not {mine}"
        )
    sizes = (ckpt.manifest.get("observation_size"), ckpt.manifest.get("num_actions"))
    if sizes != (observation_size, num_actions):
        raise CheckpointError(
            f"checkpoint {ckpt.path} expects observation/action sizes {sizes}, "
            f"the env has {(observation_size, num_actions)}"
        )


def _canon(options: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in sorted(options.items()) if v is not None}


def to_numpy(state_dict: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """A state dict's tensors as float32 numpy arrays."""
    return {
        k: v.detach().cpu().numpy().astype(np.float32) for k, v in state_dict.items()
    }
