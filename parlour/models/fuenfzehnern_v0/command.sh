# Fünfzehnern, 4 players: the batch backend's preset (configs/fuenfzehnern_v0.batch.yaml,
# seed 0), its budget raised so that only the clock stopped it. The warm start ran first and
# was stopped by Ctrl-C as self-play began; then the run was resumed beside the sb3 recipe's
# run and stopped by Ctrl-C after 25 minutes of self-play wall time (docs/results.md,
# "Honeymoon Whist, Fünfzehnern and Herzeln: the batch backend against the sb3 recipe at
# equal wall time"). The shipped agent is the run's last checkpoint.
parlour train fuenfzehnern_v0 --backend batch --preset batch --run-dir runs/fz-eq-batch \
    --set total_timesteps=1000000000
parlour train fuenfzehnern_v0 --backend batch --resume --run-dir runs/fz-eq-batch
parlour eval runs/fz-eq-batch --vs random heuristic --games 8000 --duplicate --seed 777 \
    --json runs/fz-eq-batch/eval.json
parlour eval runs/fz-eq-batch --vs solver --games 2000 --duplicate --seed 777 \
    --json runs/fz-eq-batch/solver.json
python -m parlour.training.pretrained runs/fz-eq-batch --command-file command.sh \
    --eval-json runs/fz-eq-batch/eval-random.json runs/fz-eq-batch/eval-heuristic.json \
    runs/fz-eq-batch/solver-solver.json --card card.md
