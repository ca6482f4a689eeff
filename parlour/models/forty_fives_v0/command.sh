# Forty-Fives, 4 players in partnerships, matches to 45: the batch backend's preset
# (configs/forty_fives_v0.batch.yaml, seed 0), its budget raised so that only the clock
# stopped it: Ctrl-C after 15 minutes of wall time (docs/results.md, "Forty-Fives: the
# batch backend against the sb3 recipe at equal wall time").
parlour train forty_fives_v0 --backend batch --preset batch --run-dir runs/ff-eq-batch \
    --set total_timesteps=100000000
# Choosing the checkpoint on other deals (seed 555) than the final evaluation's: steps
# 4.03M 0.474, 6.03M 0.492, 7.01M 0.485, 8.03M 0.492, 8.88M (the last) 0.484 against the
# heuristic; the later of the two best.
for c in step_004030464 step_006029312 step_007012352 step_008028160 step_008880128; do
    parlour eval runs/ff-eq-batch/checkpoints/$c --vs heuristic --games 2000 --duplicate \
        --seed 555
done
parlour eval runs/ff-eq-batch/checkpoints/step_008028160 --vs random heuristic \
    --games 4000 --duplicate --seed 777 --json runs/ff-eq-batch/eval.json
python -m parlour.training.pretrained runs/ff-eq-batch/checkpoints/step_008028160 \
    --command-file command.sh \
    --eval-json runs/ff-eq-batch/eval-random.json runs/ff-eq-batch/eval-heuristic.json \
    --card card.md
