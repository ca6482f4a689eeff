# Forty-Fives, 4 players in partnerships, matches to 45: the batch backend's preset
# (configs/forty_fives_v0.batch.yaml, seed 0), its budget raised so that only the clock
# stopped it. First 15 minutes beside the sb3 recipe (docs/results.md, "Forty-Fives: the
# batch backend against the sb3 recipe at equal wall time"), then resumed twice: 50 more
# minutes, then 54 more, each time with a core of its own (119 minutes in all).
parlour train forty_fives_v0 --backend batch --preset batch --run-dir runs/ff-long \
    --set total_timesteps=100000000        # Ctrl-C after 15 minutes
parlour train forty_fives_v0 --backend batch --resume --run-dir runs/ff-long
                                           # Ctrl-C after 50 more minutes
parlour train forty_fives_v0 --backend batch --resume --run-dir runs/ff-long
                                           # Ctrl-C after 54 more minutes (step 62.1M)
# Choosing the checkpoint on other deals (seed 555) than the final evaluation's, against
# the heuristic: 12.0M 0.490, 16.0M 0.491, 20.0M 0.494, 24.0M 0.505, 28.0M 0.510,
# 32.0M 0.513, 34.4M 0.511, 38.0M 0.510, 42.0M 0.505, 46.0M 0.509, 50.0M 0.519,
# 54.0M 0.521, 58.0M 0.516, 62.0M 0.527, 62.1M (the last) 0.525; the best, 62.0M, is shipped.
for c in step_012025856 step_016023552 step_020021248 step_024018944 step_028016640 \
         step_032014336 step_034406400 step_038010880 step_042008576 step_046006272 \
         step_050003968 step_054001664 step_058032128 step_062029824 step_062095360; do
    parlour eval runs/ff-long/checkpoints/$c --vs heuristic --games 2000 --duplicate --seed 555
done
parlour eval runs/ff-long/checkpoints/step_062029824 --vs random heuristic \
    --games 4000 --duplicate --seed 777 --json runs/ff-long/eval62.json
parlour eval runs/ff-long/checkpoints/step_062029824 --vs solver --games 400 \
    --duplicate --seed 777 --json runs/ff-long/solver62.json
python -m parlour.training.pretrained runs/ff-long/checkpoints/step_062029824 \
    --command-file command.sh \
    --eval-json runs/ff-long/eval62-random.json runs/ff-long/eval62-heuristic.json \
    runs/ff-long/solver62-solver.json --card card.md
