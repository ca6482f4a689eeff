# German Whist (variant=german): the quick default config, configs/german_whist_v0.yaml
# (2,000 heuristic games imitated, then 300k steps of self-play MaskablePPO), seed 0.
parlour train german_whist_v0 --run-dir runs/gw-quick
parlour eval runs/gw-quick --vs random heuristic --games 4000 --duplicate --seed 777 \
    --json runs/gw-quick/eval.json
python -m parlour.training.pretrained runs/gw-quick --command-file command.sh \
    --eval-json runs/gw-quick/eval-random.json runs/gw-quick/eval-heuristic.json \
    --card card.md
