# Herzeln, 4 players, the partie of eight contracts: the strong preset
# (configs/herzeln_v0.strong.yaml, seed 0): 6,000 imitated heuristic parties, then batched
# self-play PPO with the rewards in fiftieths of a point. The run was started with a larger
# budget and stopped with Ctrl-C at step 61,505,536, the preset's budget:
parlour train herzeln_v0 --backend batch --preset batch --run-dir runs/hz-bstrong \
    --set warm_start_games=6000 --set reward_scale=0.02 --set total_timesteps=200000000 \
    --set checkpoint_every=2000000 --set eval_every=4000000 --set torch_threads=2
# the same recipe as one command:
#   parlour train herzeln_v0 --backend batch --preset strong --run-dir runs/hz-strong
# Progress on other deals (seed 555, 250 parties in all four seatings) than the final
# evaluation's, against the heuristic: step 0 0.229, 20M 0.255, 36M 0.262, 56M 0.289,
# 61.5M 0.298; the last checkpoint is shipped.
parlour eval runs/hz-bstrong/checkpoints/step_061505536 --vs heuristic --games 1000 --duplicate --seed 555
parlour eval runs/hz-bstrong/checkpoints/step_061505536 --vs random heuristic --games 1000 \
    --duplicate --seed 777 --json runs/hz-bstrong/eval.json
parlour eval runs/hz-bstrong/checkpoints/step_061505536 --vs solver --games 200 --duplicate \
    --seed 777 --json runs/hz-bstrong/solver.json
python -m parlour.training.pretrained runs/hz-bstrong/checkpoints/step_061505536 --command-file command.sh \
    --eval-json runs/hz-bstrong/eval-random.json runs/hz-bstrong/eval-heuristic.json \
    runs/hz-bstrong/solver-solver.json --card card.md
