# Fünfzehnern, 4 players each for himself (configs/fuenfzehnern_v0.yaml, seed 0) with
# twice the config's teacher deals.
parlour train fuenfzehnern_v0 --run-dir runs/fz-4k --set warm_start_games=4000 \
    --set warm_start_workers=2
# Choosing the checkpoint on other deals (seed 555): the last won 0.258, step 0 0.246.
for c in runs/fz-4k/checkpoints/step_000000000 runs/fz-4k; do
    parlour eval $c --vs heuristic --games 4000 --duplicate --seed 555
done
parlour eval runs/fz-4k --vs random heuristic --games 8000 --duplicate --seed 777 \
    --json runs/fz-4k/eval.json
python -m parlour.training.pretrained runs/fz-4k --command-file command.sh \
    --eval-json runs/fz-4k/eval-random.json runs/fz-4k/eval-heuristic.json \
    --card card.md
