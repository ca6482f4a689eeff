"""Learner steps per second of self-play training (whole loop: env, opponents, PPO
updates).

    python benchmarks/train_speed.py [--env german_whist_v0] [--steps 20000]
        [--set key=value]

Uses the env's default config (configs/ENV.yaml) with evaluation, checkpoints and
TensorBoard switched off so only training is timed; the warm start (imitation of a bot
before step 0, a fixed cost that `train` reports in ``warm_start.json``) is switched off
too, so the figure is self-play PPO's. Target for German Whist on the
2-core reference machine: at least 1,000 learner steps/s. Not a test: nothing fails on a
slow machine.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="german_whist_v0")
    parser.add_argument(
        "--steps", type=int, default=20_000, help="learner steps to time"
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="config override, repeatable",
    )
    args = parser.parse_args(argv)
    if args.steps < 1:
        parser.error("--steps must be positive")

    from parlour.training.train import load_config, train

    off = [
        f"total_timesteps={args.steps}",
        "eval_every=1000000000",
        "checkpoint_every=1000000000",
        "tensorboard=false",
        "warm_start=''",
    ]
    try:
        config = load_config(None, env=args.env, overrides=[*args.set, *off])
    except ValueError as err:
        parser.error(str(err))
    with tempfile.TemporaryDirectory() as run_dir:
        t0 = time.perf_counter()
        result = train(config, run_dir=run_dir, progress=True, final_eval=False)
        seconds = time.perf_counter() - t0
    rate = result.steps / seconds
    print(
        f"{args.env}: {result.steps} learner steps in {seconds:.1f} s "
        f"= {rate:,.0f} steps/s "
        f"(opponents {config.opponents}, n_envs {config.n_envs}, "
        f"n_steps {config.n_steps}, net {config.net_arch})"
    )
    verdict = "PASS" if rate >= 1000 else "MISS"
    print(f"target >= 1,000 steps/s: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
