# Fünfzehn – tot, 4 players (configs/fuenfzehn_tot_v0.yaml, seed 0), the config as it is.
parlour train fuenfzehn_tot_v0 --run-dir runs/ft
parlour eval runs/ft --vs random heuristic --games 8000 --duplicate --seed 777 \
    --json runs/ft/eval.json
python -m parlour.training.pretrained runs/ft --command-file command.sh \
    --eval-json runs/ft/eval-random.json runs/ft/eval-heuristic.json --card card.md
