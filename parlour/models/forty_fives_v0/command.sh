# Forty-Fives, 4 players in partnerships, matches to 45 (configs/forty_fives_v0.yaml, seed 0)
# with three times the config's teacher games. The first session was stopped during the
# fit (10 epochs would have taken 35 minutes on the shared machine) and resumed with
# 4 epochs; the 6,000 teacher games were kept and reused.
parlour train forty_fives_v0 --run-dir runs/ff-6k --set warm_start_games=6000 \
    --set warm_start_workers=2
parlour train forty_fives_v0 --resume --run-dir runs/ff-6k --set warm_start_epochs=4
# Choosing the checkpoint on other deals (seed 555) than the final evaluation's: the
# step-0 checkpoint (the imitation alone) won 0.474, step 200,704 0.465, the last 0.460.
for c in step_000000000 step_000200704 step_000401408; do
    parlour eval runs/ff-6k/checkpoints/$c --vs heuristic --games 2000 --duplicate --seed 555
done
parlour eval runs/ff-6k/checkpoints/step_000000000 --vs random heuristic --games 4000 \
    --duplicate --seed 777 --json runs/ff-6k/eval.json
python -m parlour.training.pretrained runs/ff-6k/checkpoints/step_000000000 \
    --command-file command.sh \
    --eval-json runs/ff-6k/eval-random.json runs/ff-6k/eval-heuristic.json \
    --card card.md
