# German Whist (variant=german): the strong preset, configs/german_whist_v0.strong.yaml
# (40,000 heuristic games with stage 2 labelled by the exact solver, imitated for 10
# epochs, then 750k steps of self-play MaskablePPO), seed 0. About 7 GB of memory at the
# peak of the warm start.
parlour train german_whist_v0 --preset strong --run-dir runs/gw-strong
parlour eval runs/gw-strong --vs random heuristic --games 4000 --duplicate --seed 777 \
    --json runs/gw-strong/eval.json
parlour eval runs/gw-strong --vs random --games 2 --seed 4242 --stage2-quality 1000
parlour eval runs/gw-strong --vs solver --games 1000 --duplicate --seed 777 \
    --json runs/gw-strong/solver.json
python -m parlour.training.pretrained runs/gw-strong --command-file command.sh \
    --eval-json runs/gw-strong/eval-random.json runs/gw-strong/eval-heuristic.json \
    runs/gw-strong/solver-solver.json --card card.md
