# German Whist (variant=german): the strong preset, configs/german_whist_v0.strong.yaml
# (40,000 heuristic games with stage 2 labelled by the exact solver, imitated for 10
# epochs, then 750k steps of self-play MaskablePPO), seed 0; about 7 GB of memory at the
# peak of the warm start. Then DAgger with the exact solver on stage 2 (docs/training.md,
# docs/results.md): five rounds of 4,000 games against the heuristic and itself, then two
# more with the suits renamed at random and 12 epochs, on other deals (seed 1); a third
# run of three rounds with the suits renamed, from the strong preset's network, only for
# its data. Then one refit of the DAgger network to all three runs' decisions at once
# (the suits renamed, the epoch best on the runs' held-out decisions: epoch 5). The
# refit named its source pretrained:german_whist_v0, which was runs/gw-dagger-sym12's
# network then (the same weights).
parlour train german_whist_v0 --preset strong --run-dir runs/gw-strong
python -m parlour.training.dagger runs/gw-strong --run-dir runs/gw-dagger --rounds 5 \
    --games 4000 --epochs 4 --learning-rate 3e-4 --workers 2
python -m parlour.training.dagger runs/gw-strong --run-dir runs/gw-dagger-sym \
    --rounds 3 --games 4000 --epochs 4 --learning-rate 3e-4 --workers 2 --suit-symmetry
python -m parlour.training.dagger runs/gw-dagger --run-dir runs/gw-dagger-sym12 \
    --rounds 2 --games 4000 --epochs 12 --learning-rate 3e-4 --workers 2 \
    --suit-symmetry --seed 1
python -m parlour.training.distil runs/gw-dagger-sym12 --out runs/distil-256x2 \
    --data runs/gw-dagger runs/gw-dagger-sym runs/gw-dagger-sym12 --suit-symmetry \
    --learning-rate 2e-4 --epochs 12 --patience 3
# evaluation on fresh deals (seed 9404; seed 9303 and the held-out decisions chose this
# refit among four); against solver in chunks of 100 games (the card gives them merged)
parlour eval runs/distil-256x2 --vs heuristic --games 2000 --duplicate \
    --seed 9404 --stage2-quality 1000 --json runs/eval/d256x2-9404.json
parlour eval runs/distil-256x2 --vs random --games 2000 --duplicate --seed 9404 \
    --json runs/eval/d256x2-9404.json
for s in 9405 9406 9407 9408; do
    parlour eval runs/distil-256x2 --vs solver --games 100 --duplicate --seed $s \
        --json runs/eval/solver-$s.json
done
python -m parlour.training.pretrained runs/distil-256x2 --command-file command.sh \
    --eval-json runs/eval/d256x2-9404-random.json \
    runs/eval/d256x2-9404-heuristic.json --card card.md
# 2026-12-05: the model plays its policy averaged over the 24 renamings of the suits
# (the manifest's suit_average; docs/results.md, "averaging over the suit renamings")
python -c "from parlour.training.checkpoint import set_suit_average; \
set_suit_average('parlour/models/german_whist_v0', True)"
# 2026-12-06 (docs/results.md, "stage 2 in canonical form, and expert iteration on
# stage 1"): four DAgger runs from that model only for their data (one epoch of fit a
# round; seeds 11 to 14); a refit of it to their 18 rounds with stage 2 read in canonical
# form (ranks compressed, trumps first, plain suits in order: the manifest's
# canonical_form), the epoch best on the runs' held-out decisions (13 of 15); then five
# rounds of expert iteration, DAgger with the expert teacher (stage-1 labels where PIMC
# over the network's own card plays another card; stage 2 exact). The data runs named
# their source pretrained:german_whist_v0, which was runs/distil-256x2 then. The expert
# iteration run was stopped after round 3 and continued with --resume --rounds 5.
for S in 11 12; do
    python -m parlour.training.dagger runs/distil-256x2 --run-dir runs/c/dag-$S \
        --rounds 4 --games 4000 --epochs 1 --learning-rate 2e-4 --workers 1 \
        --suit-symmetry --seed $S
done
for S in 13 14; do
    python -m parlour.training.dagger runs/distil-256x2 --run-dir runs/c/dag-$S \
        --rounds 5 --games 8000 --epochs 1 --learning-rate 2e-4 --workers 1 \
        --suit-symmetry --seed $S
done
python -m parlour.training.distil runs/distil-256x2 --canonical-form \
    --out runs/c/canon-256 --data runs/c/dag-11 runs/c/dag-12 runs/c/dag-13 \
    runs/c/dag-14 --learning-rate 2e-4 --epochs 15 --patience 3
python -m parlour.training.dagger runs/c/canon-256 --run-dir runs/c/exit \
    --teacher expert --rounds 5 --games 10000 --epochs 3 --learning-rate 2e-4 \
    --anchor 0.5 --anchor-fraction 1.0 --workers 2 --seed 31
# evaluation on fresh deals (seeds 30101 to 30104; seeds 30001, 30002 and 30012 chose
# the refit and the round)
N=runs/c/exit/checkpoints/round-5
parlour eval $N --vs random heuristic --games 2000 --duplicate --seed 30101 \
    --stage2-quality 1000 --json runs/eval/new-30101.json
parlour eval ckpt:$N@plain --env german_whist_v0 --exact --games 1000 --seed 30102
parlour arena german_whist_v0 --agents ckpt:$N@plain solver --games 4000 --duplicate \
    --seed 30103 --json runs/eval/new-s-30103.json
python -m parlour.training.pretrained $N --command-file command.sh \
    --eval-json runs/eval/new-30101-random.json runs/eval/new-30101-heuristic.json \
    --card card.md --suit-average
# 2026-12-06, later (docs/results.md, "a stronger expert, and expert iteration under
# it"): expert's German budget raised to 128 samples with a margin of 4
# (envs/german_whist/hooks.py; the teacher searches with it), and four more rounds of
# expert iteration from the model above (pretrained:german_whist_v0 was
# runs/c/exit/checkpoints/round-5 then). The run was made with --rounds 4, then continued
# with --resume --rounds 5; seed 30012 chose round 4 among the five.
python -m parlour.training.dagger pretrained:german_whist_v0 --run-dir runs/c/exit128 \
    --teacher expert --rounds 4 --games 4000 --epochs 3 --learning-rate 2e-4 \
    --anchor 0.5 --anchor-fraction 1.0 --workers 2 --seed 32
# evaluation on fresh deals (seeds 30301 to 30305; 30012 chose the round)
N=runs/c/exit128/checkpoints/round-4
parlour eval $N --vs random heuristic --games 2000 --duplicate --seed 30301 \
    --stage2-quality 1000 --json runs/eval/n4-30301.json
parlour eval ckpt:$N@plain --env german_whist_v0 --exact --games 1000 --seed 30302
parlour arena german_whist_v0 --agents ckpt:$N@plain solver --games 4000 --duplicate \
    --seed 30303 --json runs/eval/n4-s-30303.json
parlour arena german_whist_v0 --agents ckpt:$N@sym solver --games 4000 --duplicate \
    --seed 30303 --json runs/eval/n4-ssym-30303.json
parlour arena german_whist_v0 --agents ckpt:$N@sym heuristic --games 2000 --duplicate \
    --seed 30301 --json runs/eval/n4-hsym-30301.json
python -m parlour.training.pretrained $N --command-file command.sh \
    --eval-json runs/eval/n4-30301-random.json runs/eval/n4-30301-heuristic.json \
    --card card.md --suit-average
parlour arena german_whist_v0 --agents expert solver --games 2000 --duplicate \
    --seed 30304 --json runs/eval/expert-s-30304.json
parlour arena german_whist_v0 --agents expert solver --games 400 --duplicate \
    --seed 30305 --json runs/eval/expert-s-30305.json
