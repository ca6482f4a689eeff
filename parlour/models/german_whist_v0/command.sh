# German Whist (variant=german): the strong preset, configs/german_whist_v0.strong.yaml
# (40,000 heuristic games with stage 2 labelled by the exact solver, imitated for 10
# epochs, then 750k steps of self-play MaskablePPO), seed 0; about 7 GB of memory at the
# peak of the warm start. Then five rounds of DAgger with the exact solver on stage 2
# (4,000 games a round against the heuristic and itself, docs/training.md).
parlour train german_whist_v0 --preset strong --run-dir runs/gw-strong
python -m parlour.training.dagger runs/gw-strong --run-dir runs/gw-dagger --rounds 5 \
    --games 4000 --epochs 4 --learning-rate 3e-4 --workers 2
# evaluation on fresh deals (seed 6161); against solver in chunks of 50 games (the card
# gives their games merged)
parlour eval runs/gw-dagger --vs random heuristic --games 2000 --duplicate --seed 6161 \
    --stage2-quality 1000 --json runs/gw-dagger/eval.json
for s in 6161 6162 6163 6164 6181 6182 6183 6184; do
    parlour eval runs/gw-dagger --vs solver --games 50 --duplicate --seed $s \
        --json runs/gw-dagger/solver-$s.json
done
python -m parlour.training.pretrained runs/gw-dagger --command-file command.sh \
    --eval-json runs/gw-dagger/eval-random.json runs/gw-dagger/eval-heuristic.json \
    --card card.md
