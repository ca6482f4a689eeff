# Honeymoon Whist (german_whist_v0 -o variant=honeymoon, a match to 14): the batch backend's
# preset (configs/german_whist_v0.batch.yaml, seed 0) with the variant set, its budget raised
# so that only the clock stopped it. The warm start ran first and was stopped by Ctrl-C as
# self-play began (its teacher games were kept from a first start); then the run was resumed
# beside the sb3 recipe's run and stopped by Ctrl-C after 25 minutes of self-play wall time
# (docs/results.md, "Honeymoon Whist, Fünfzehnern and Herzeln: the batch backend against the
# sb3 recipe at equal wall time"). The shipped agent is the run's last checkpoint.
parlour train german_whist_v0 --backend batch --preset batch --run-dir runs/hm-eq-batch \
    --set total_timesteps=1000000000 --set env_options.variant=honeymoon
parlour train german_whist_v0 --backend batch --resume --run-dir runs/hm-eq-batch
parlour eval runs/hm-eq-batch --vs random heuristic --games 4000 --duplicate --seed 777 \
    --json runs/hm-eq-batch/hm-batch.json
parlour eval pretrained:german_whist_v0.honeymoon --vs solver --games 100 --duplicate \
    --seed 777 --json runs/hm-eq-batch/hm-solver.json
python -m parlour.training.pretrained runs/hm-eq-batch --command-file command.sh \
    --eval-json runs/hm-eq-batch/hm-batch-random.json runs/hm-eq-batch/hm-batch-heuristic.json \
    runs/hm-eq-batch/hm-solver-solver.json --card card.md
