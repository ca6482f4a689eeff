# Honeymoon Whist (german_whist_v0 -o variant=honeymoon, a match to 14): the batch backend's
# preset (configs/german_whist_v0.batch.yaml, seed 0) with the variant set, its budget raised
# so that only the clock stopped it. The warm start ran first and was stopped by Ctrl-C as
# self-play began (its teacher games were kept from a first start); then the run was resumed
# beside the sb3 recipe's run and stopped by Ctrl-C after 25 minutes of self-play wall time
# (docs/results.md, "Honeymoon Whist, Fünfzehnern and Herzeln: the batch backend against the
# sb3 recipe at equal wall time"). Its last checkpoint was the agent shipped until 2026-12-05.
parlour train german_whist_v0 --backend batch --preset batch --run-dir runs/hm-eq-batch \
    --set total_timesteps=1000000000 --set env_options.variant=honeymoon
parlour train german_whist_v0 --backend batch --resume --run-dir runs/hm-eq-batch
# Then DAgger with the exact solver on stage 2 (docs/training.md; docs/results.md,
# "Honeymoon Whist: DAgger with the exact solver"): three rounds of 1,500 matches against
# the heuristic and itself, each decisive stage-2 decision labelled with the cards that take
# the most tricks; the shipped agent is round 3. The source was the model shipped then
# (runs/hm-eq-batch's last checkpoint).
parlour dagger pretrained:german_whist_v0.honeymoon --run-dir runs/hm-dagger --rounds 3 \
    --games 1500 --epochs 4 --learning-rate 3e-4 --workers 1
# seed 9505 chose round 3 over a continuation with suit renaming (docs/results.md)
parlour eval runs/hm-dagger --vs heuristic --games 2000 --duplicate --seed 9505 \
    --stage2-quality 500
# evaluation on fresh deals: seed 9606 against the heuristic and random, 9607-9609 solver
parlour eval runs/hm-dagger --vs heuristic --games 4000 --duplicate --seed 9606 \
    --json runs/hm-dagger/e9606.json
parlour eval runs/hm-dagger --vs random --games 2000 --duplicate --seed 9606 \
    --json runs/hm-dagger/e9606.json
# against solver in chunks of 20 matches (the card gives them merged; the manifest 9607's)
for s in 9607 9608 9609; do
    parlour eval runs/hm-dagger --vs solver --games 20 --duplicate --seed $s \
        --json runs/hm-dagger/e$s.json
done
python -m parlour.training.pretrained runs/hm-dagger --command-file command.sh \
    --eval-json runs/hm-dagger/e9606-random.json runs/hm-dagger/e9606-heuristic.json \
    runs/hm-dagger/e9607-solver.json --card card.md
# 2026-12-05: the model plays its policy averaged over the 24 renamings of the suits
# (the manifest's suit_average; docs/results.md, "averaging over the suit renamings")
python -c "from parlour.training.checkpoint import set_suit_average; \
set_suit_average('parlour/models/german_whist_v0.honeymoon', True)"
# 2026-12-06 (docs/results.md, "stage 2 in canonical form"): two DAgger runs from that
# model only for their data (one epoch of fit a round; seeds 41, 42; 413,386 decisive
# stage-2 rows), then a refit of it with stage 2 read in canonical form (ranks
# compressed, trumps first, plain suits in order: the manifest's canonical_form), the
# epoch best on the runs' held-out decisions (10 of 10). The runs named their source
# pretrained:german_whist_v0.honeymoon, which was runs/hm-dagger then.
for S in 41 42; do
    python -m parlour.training.dagger runs/hm-dagger --run-dir runs/c/hm-$S \
        --rounds 3 --games 1500 --epochs 1 --learning-rate 2e-4 --workers 1 \
        --suit-symmetry --seed $S
done
python -m parlour.training.distil runs/hm-dagger --canonical-form --out runs/c/hm-canon \
    --data runs/c/hm-41 runs/c/hm-42 --learning-rate 2e-4 --epochs 10 --patience 3
# evaluation on fresh deals (seeds 30201, 30202; one candidate, nothing chose on them)
parlour eval ckpt:runs/c/hm-canon@plain --env german_whist_v0 --exact --games 200 \
    --seed 30201
parlour eval runs/c/hm-canon --vs random heuristic --games 1000 --duplicate \
    --seed 30202 --json runs/eval/hm-30202.json
python -m parlour.training.pretrained runs/c/hm-canon --command-file command.sh \
    --eval-json runs/eval/hm-30202-random.json runs/eval/hm-30202-heuristic.json \
    --card card.md --suit-average
