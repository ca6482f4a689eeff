# German Whist (variant=german): the strong preset, configs/german_whist_v0.strong.yaml
# (40,000 heuristic games with stage 2 labelled by the exact solver, imitated for 10
# epochs, then 750k steps of self-play MaskablePPO), seed 0; about 7 GB of memory at the
# peak of the warm start. Then DAgger with the exact solver on stage 2 (docs/training.md,
# docs/results.md): five rounds of 4,000 games against the heuristic and itself, then two
# more with the suits renamed at random and 12 epochs, on other deals (seed 1).
parlour train german_whist_v0 --preset strong --run-dir runs/gw-strong
python -m parlour.training.dagger runs/gw-strong --run-dir runs/gw-dagger --rounds 5 \
    --games 4000 --epochs 4 --learning-rate 3e-4 --workers 2
python -m parlour.training.dagger runs/gw-dagger --run-dir runs/gw-dagger-sym12 \
    --rounds 2 --games 4000 --epochs 12 --learning-rate 3e-4 --workers 2 \
    --suit-symmetry --seed 1
# evaluation on fresh deals (seed 7373; seed 6161 chose this run over runs/gw-dagger);
# against solver in chunks of 50 games (the card gives their games merged)
parlour eval runs/gw-dagger-sym12 --vs random heuristic --games 2000 --duplicate \
    --seed 7373 --stage2-quality 1000 --json runs/gw-dagger-sym12/eval.json
for s in 7373 7374 7375 7376 7377 7393 7394 7395 7396 7397; do
    parlour eval runs/gw-dagger-sym12 --vs solver --games 50 --duplicate --seed $s \
        --json runs/gw-dagger-sym12/solver-$s.json
done
python -m parlour.training.pretrained runs/gw-dagger-sym12 --command-file command.sh \
    --eval-json runs/gw-dagger-sym12/eval-random.json \
    runs/gw-dagger-sym12/eval-heuristic.json --card card.md
