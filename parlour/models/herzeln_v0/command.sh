# Herzeln, 4 players, the partie of eight contracts (configs/herzeln_v0.yaml, seed 0) with
# three times the config's teacher parties.
parlour train herzeln_v0 --run-dir runs/hz-450 --set warm_start_games=450 \
    --set warm_start_workers=2
# Choosing the checkpoint on other deals (seed 555, 250 parties in all four seatings).
for c in runs/hz-450/checkpoints/step_000000000 runs/hz-450; do  # step 0: 0.170, the last: 0.155
    parlour eval $c --vs heuristic --games 1000 --duplicate --seed 555
done
parlour eval runs/hz-450/checkpoints/step_000000000 --vs random heuristic --games 1000 --duplicate --seed 777 \
    --json runs/hz-450/eval.json
python -m parlour.training.pretrained runs/hz-450/checkpoints/step_000000000 --command-file command.sh \
    --eval-json runs/hz-450/eval-random.json runs/hz-450/eval-heuristic.json \
    --card card.md
