# Herzeln, 4 players, the partie of eight contracts (configs/herzeln_v0.yaml, seed 0) with
# 40 times the config's teacher parties (6,000) and a token self-play phase: the shipped
# agent is the imitation alone (the step-0 checkpoint), since PPO on top lowered the win
# share against the heuristic in the earlier run (docs/results.md).
parlour train herzeln_v0 --run-dir runs/hz-6000 --set warm_start_games=6000 \
    --set warm_start_workers=2 --set total_timesteps=4096 --set eval_games=100
# Choosing the teacher and the number of parties on other deals (seed 555, 250 parties in
# all four seatings) than the final evaluation's, against the heuristic: 450 heuristic
# parties 0.170, 2,000 heuristic parties 0.217, 3,000 solver parties (--set
# warm_start=solver; 77 min of teacher games) 0.219, 6,000 heuristic parties 0.225.
parlour eval runs/hz-6000/checkpoints/step_000000000 --vs heuristic --games 1000 --duplicate --seed 555
parlour eval runs/hz-6000/checkpoints/step_000000000 --vs random heuristic --games 1000 \
    --duplicate --seed 777 --json runs/hz-6000/eval.json
parlour eval runs/hz-6000/checkpoints/step_000000000 --vs solver --games 200 --duplicate \
    --seed 777 --json runs/hz-6000/solver.json
python -m parlour.training.pretrained runs/hz-6000/checkpoints/step_000000000 --command-file command.sh \
    --eval-json runs/hz-6000/eval-random.json runs/hz-6000/eval-heuristic.json \
    runs/hz-6000/solver-solver.json --card card.md
