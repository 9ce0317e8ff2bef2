#!/bin/sh
# run.sh — `make bench`: our programs and stock PyTorch side by side, on the
# same machine, data and thread counts, in one run, as ONE table.
#
#   sh bench/run.sh            the real benchmark (a few minutes)
#   sh bench/run.sh --quick    every part on tiny inputs (configs/tiny.yaml,
#                              tests/data/tiny.tsv): checks the harness, not
#                              the speed; also BENCH_QUICK=1
#
# Needs ./translate and build/bench/train_bench (make bench builds both).
# The PyTorch columns need Debian's /usr/bin/python3 with torch; without it
# they say "skipped".  hyperfine and /usr/bin/time (Debian packages) are
# used when present, else a shell loop / "n/a".
#
# Settings (environment): BENCH_CONFIG (default configs/en-zh.yaml),
# BENCH_DATA (default the Tatoeba dev.tsv), BENCH_TORCH_SENTENCES (how many
# sentences PyTorch translates; default 200, 0 = all).
#
# The parts, as issue 6 lists them:
#   1. training tokens/s (source + target), ours (bench/train_bench.c) vs
#      PyTorch (tools/bench_torch.py train) on the same batches from the same
#      initial weights, 1 and 2 threads; and the GF/s of our step's matrix
#      products against a 1024³ gemm_nt measured in the same process
#   2. greedy translation of every line of the data, one at a time, 1 thread,
#      vs PyTorch's usual greedy loop on the same ids; beam 4 vs our greedy
#   3. a fresh process translating "I love china", vs a fresh python3
#   4. peak RSS for one sentence and for the whole batch, vs the model file
#   5. time per sentence for synthetic sources of 8, 32 and max_len-1 tokens
# Exit status: 0, or 1 when one of the measurements failed to run.
set -u
cd "$(dirname "$0")/.." || exit 1

QUICK=${BENCH_QUICK:-0}
[ "${1:-}" = "--quick" ] && QUICK=1
PY=/usr/bin/python3
TRAIN_BENCH=build/bench/train_bench
TRANSLATE=./translate
if [ "$QUICK" = 1 ]; then
    CONFIG=configs/tiny.yaml; DATA=tests/data/tiny.tsv
    STEPS=2; WARMUP=1; BATCH=100; CEILING_N=256; TRAIN_RUNS=1; LAT_RUNS=3; PY_LAT_RUNS=2; SCALE_N=2
    TORCH_SENTENCES=${BENCH_TORCH_SENTENCES:-0}
else
    CONFIG=${BENCH_CONFIG:-configs/en-zh.yaml}; DATA=${BENCH_DATA:-../shared/data/tatoeba-cmn-eng/dev.tsv}
    STEPS=5; WARMUP=2; BATCH=2500; CEILING_N=1024; TRAIN_RUNS=3; LAT_RUNS=20; PY_LAT_RUNS=5; SCALE_N=4
    # PyTorch's loop re-runs the whole model at every step: ~5 sentences/s
    # here, so all 1,000 would take minutes; 200 evenly spaced give its rate.
    TORCH_SENTENCES=${BENCH_TORCH_SENTENCES:-200}
fi

for f in "$TRAIN_BENCH" "$TRANSLATE"; do
    [ -x "$f" ] || { echo "bench: $f is missing: run 'make bench'" >&2; exit 1; }
done
[ -r "$DATA" ] || { echo "bench: $DATA: no such data file (set BENCH_DATA)" >&2; exit 1; }
TMP=$(mktemp -d) || exit 1
trap 'rm -rf "$TMP"' EXIT INT TERM
FAILED=0
note() { echo "bench: $*" >&2; }

# ---- the config, read the simple way (one "key: value" per line) ------------
yaml() { awk -v k="$1:" '$1 == k { print $2; exit }' "$CONFIG"; }
config_path() { echo "$(dirname "$CONFIG")/$(yaml "$1")"; }
WEIGHTS=$(config_path weights)
SRC_VOCAB=$(config_path source_vocab)
TGT_VOCAB=$(config_path target_vocab)
MAX_LEN=$(yaml max_len); D_MODEL=$(yaml d_model); D_FF=$(yaml d_ff)
SRC_LANG=$(yaml source_language); TGT_LANG=$(yaml target_language)
SRC_COL=1; [ "$SRC_LANG" = zh ] && SRC_COL=2
cut -f "$SRC_COL" "$DATA" > "$TMP/sources.txt"
SENTENCES=$(wc -l < "$TMP/sources.txt")

# The weights must exist before anything is timed (a config with a
# random_init_seed writes them on first use) and be in the page cache.
"$TRANSLATE" -q -c "$CONFIG" "warm up" > /dev/null 2>&1
[ -r "$WEIGHTS" ] || { echo "bench: $WEIGHTS: no weights file" >&2; exit 1; }
MODEL_BYTES=$(wc -c < "$WEIGHTS")

HAVE_TORCH=0
if [ -x "$PY" ] && "$PY" -c 'import torch' > /dev/null 2>&1; then HAVE_TORCH=1
else note "PyTorch columns skipped: $PY cannot import torch (apt-get install python3-torch)"; fi

# ---- helpers -------------------------------------------------------------------
now() { date +%s.%N; }
minus() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f", a - b }'; }
# The value of key $2 in a "k=v k=v" line $1.
kv() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
# Run the rest of the line with N threads for PyTorch (its BLAS reads these
# when it loads, so they must be set before python starts).
torch_threads() { n=$1; shift; OMP_NUM_THREADS=$n OPENBLAS_NUM_THREADS=$n MKL_NUM_THREADS=$n "$@"; }
# A failure inside $(...) cannot set a variable of this shell: leave a mark.
failed() { note "failed: $*"; cat "$TMP/err.txt" >&2; : > "$TMP/failed"; }
# Seconds taken by a command (stdin from $1, stdout to $TMP/out.txt); "" on failure.
timed() {
    input=$1; shift
    t0=$(now)
    if "$@" < "$input" > "$TMP/out.txt" 2> "$TMP/err.txt"; then minus "$(now)" "$t0"; else failed "$*"; fi
}
# The shorter of two such timings (for short runs, where noise is large).
best_of_two() {
    a=$(timed "$@"); b=$(timed "$@")
    awk -v a="$a" -v b="$b" 'BEGIN { if (a != "" && b != "") printf "%.6f", a < b ? a : b }'
}
# Mean wall seconds over $1 runs of the command line $2 (words quoted as for
# a shell): hyperfine without a shell in between, or a shell loop.
mean_wall() {
    runs=$1; cmd=$2
    if command -v hyperfine > /dev/null 2>&1; then
        warm=3; [ "$runs" -lt 10 ] && warm=1
        if hyperfine -N --style none --warmup "$warm" --runs "$runs" --export-csv "$TMP/hf.csv" \
               -- "$cmd" > /dev/null 2> "$TMP/err.txt"; then
            awk -F, 'NR == 2 { print $2 }' "$TMP/hf.csv"
        else failed "$cmd"; fi
        return
    fi
    sh -c "$cmd" > /dev/null 2>&1   # warm up
    t0=$(now); i=0
    while [ $i -lt "$runs" ]; do sh -c "$cmd" > /dev/null 2>&1; i=$((i + 1)); done
    awk -v s="$(minus "$(now)" "$t0")" -v n="$runs" 'BEGIN { printf "%.6f", s / n }'
}
# Peak resident set size in KB of a command reading stdin from $1.
peak_rss() {
    input=$1; shift
    if [ -x /usr/bin/time ]; then
        if /usr/bin/time -f %M -o "$TMP/rss.txt" "$@" < "$input" > /dev/null 2> "$TMP/err.txt"; then
            tail -n 1 "$TMP/rss.txt"
        else failed "$*"; fi
    fi
}
# torch_run THREADS ARGS...: tools/bench_torch.py's key=value line, or "".
torch_run() {
    n=$1; shift
    if ! torch_threads "$n" "$PY" tools/bench_torch.py "$@" 2> "$TMP/err.txt"; then
        failed "tools/bench_torch.py $*"
    fi
}

# ---- 1. training ----------------------------------------------------------------
note "1. training: $STEPS timed steps (+$WARMUP warm-up) of ~$BATCH tokens, ours then PyTorch"
# ours_train THREADS [--dump FILE]: the median (by tokens/s) of TRAIN_RUNS runs
# of train_bench on the same batches: one run of a few seconds moved by
# up to 25% between runs on this shared machine.
ours_train() {
    n=$1; shift
    for r in $(seq "$TRAIN_RUNS"); do
        "$TRAIN_BENCH" -t "$n" -s "$STEPS" -w "$WARMUP" -b "$BATCH" -n "$CEILING_N" "$@" "$CONFIG" "$DATA" \
            2> "$TMP/err.txt" || { failed "$TRAIN_BENCH -t $n"; return; }
    done | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^tokens_per_s=/) print substr($i, 14), $0 }' |
        sort -n | awk -v mid=$(( (TRAIN_RUNS + 1) / 2 )) 'NR == mid { $1 = ""; sub(/^ /, ""); print }'
}
OURS_T1=$(ours_train 1 --dump "$TMP/dump.safetensors")
OURS_T2=$(ours_train 2)
TORCH_T1=""; TORCH_T2=""
if [ $HAVE_TORCH = 1 ] && [ -r "$TMP/dump.safetensors" ]; then
    TORCH_T1=$(torch_run 1 train "$TMP/dump.safetensors" "$CEILING_N")
    TORCH_T2=$(torch_run 2 train "$TMP/dump.safetensors" "$CEILING_N")
fi

# ---- 2. translation throughput ---------------------------------------------------
note "2. translation: $SENTENCES sentences, one at a time, 1 thread"
GREEDY_S=$(timed "$TMP/sources.txt" "$TRANSLATE" -q -t 1 -b 1 -c "$CONFIG")
BEAM_S=$(timed "$TMP/sources.txt" "$TRANSLATE" -q -t 1 -b 4 -c "$CONFIG")
TORCH_TR=""
if [ $HAVE_TORCH = 1 ] && [ -r "$TMP/dump.safetensors" ]; then
    if [ "$TORCH_SENTENCES" -gt 0 ]; then
        TORCH_TR=$(torch_run 1 translate "$WEIGHTS" "$TMP/dump.safetensors" "$TORCH_SENTENCES")
    else
        TORCH_TR=$(torch_run 1 translate "$WEIGHTS" "$TMP/dump.safetensors")
    fi
fi

# ---- 3. fresh-process latency -----------------------------------------------------
note "3. latency: a fresh process translating \"I love china\""
LAT_OURS=$(mean_wall "$LAT_RUNS" "$TRANSLATE -q -c '$CONFIG' 'I love china'")
LAT_TORCH=""
[ $HAVE_TORCH = 1 ] && LAT_TORCH=$(mean_wall "$PY_LAT_RUNS" "env OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
MKL_NUM_THREADS=1 $PY tools/bench_torch.py sentence '$WEIGHTS' '$SRC_VOCAB' '$TGT_VOCAB' 'I love china'")

# ---- 4. memory --------------------------------------------------------------------
note "4. memory: peak RSS"
echo "I love china" > "$TMP/one.txt"
RSS_ONE=$(peak_rss "$TMP/one.txt" "$TRANSLATE" -q -t 1 -c "$CONFIG")
RSS_ALL=$(peak_rss "$TMP/sources.txt" "$TRANSLATE" -q -t 1 -c "$CONFIG")
[ -x /usr/bin/time ] || note "peak RSS skipped: /usr/bin/time missing (apt-get install time)"

# ---- 5. scaling with the source length ---------------------------------------------
# Synthetic sources of L vocabulary words (letters only, so each word is
# one token), SCALE_N different ones per length.  Time per sentence is
# (T(twice the file) - T(the file)) / SCALE_N: start-up and loading cancel.
MID=32; [ $((MAX_LEN / 2)) -lt $MID ] && MID=$((MAX_LEN / 2))
SCALE_LENGTHS="8 $MID $((MAX_LEN - 1))"
note "5. scaling: sources of $SCALE_LENGTHS tokens, 1 thread"
awk -F '\t' 'NR > 4 && $1 ~ /^[a-z]+$/ { print $1 }' "$SRC_VOCAB" > "$TMP/words.txt"
[ -s "$TMP/words.txt" ] || awk -F '\t' 'NR > 4 { print $1 }' "$SRC_VOCAB" > "$TMP/words.txt"
SCALE_ROWS=""
for L in $SCALE_LENGTHS; do
    awk -v L="$L" -v n="$SCALE_N" 'BEGIN { srand(L) } { w[NR] = $1 }
        END { for (s = 0; s < n; s++) { line = "";
                  for (i = 0; i < L; i++) line = line (i ? " " : "") w[1 + int(rand() * NR)];
                  print line } }' "$TMP/words.txt" > "$TMP/scale1.txt"
    cat "$TMP/scale1.txt" "$TMP/scale1.txt" > "$TMP/scale2.txt"
    t1=$(best_of_two "$TMP/scale1.txt" "$TRANSLATE" -q -t 1 -c "$CONFIG")
    if [ "$TGT_LANG" = zh ]; then out=$(LC_ALL=C.UTF-8 tr -d ' \n' < "$TMP/out.txt" | LC_ALL=C.UTF-8 wc -m)
    else out=$(wc -w < "$TMP/out.txt"); fi
    t2=$(best_of_two "$TMP/scale2.txt" "$TRANSLATE" -q -t 1 -c "$CONFIG")
    SCALE_ROWS="$SCALE_ROWS$L $t1 $t2 $out;"
done

# ---- the table ---------------------------------------------------------------------
CPU=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
KERNEL=$(kv "$OURS_T1" kernel)
echo "# make bench — $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
[ "$QUICK" = 1 ] && { echo "**QUICK MODE** (tiny model, tiny data): checks the harness; the figures mean nothing."; echo; }
echo "CPU: $CPU, $(nproc) cores online; our GEMM kernel: ${KERNEL:-?}; threads: as each row says."
echo "Config: $CONFIG ($(basename "$WEIGHTS"), $MODEL_BYTES bytes); data: $DATA ($SENTENCES lines)."
echo "PyTorch: $([ $HAVE_TORCH = 1 ] && "$PY" -c 'import torch; print("torch", torch.__version__)' 2>/dev/null || echo "not available"), BLAS: $(kv "$TORCH_T1" blas)."
echo
echo "| row | measure | ours | PyTorch / reference | ratio | issue target | verdict |"
echo "|---|---|---:|---:|---:|---|---|"
awk -v o1="$(kv "$OURS_T1" tokens_per_s)" -v o2="$(kv "$OURS_T2" tokens_per_s)" \
    -v p1="$(kv "$TORCH_T1" tokens_per_s)" -v p2="$(kv "$TORCH_T2" tokens_per_s)" \
    -v g1="$(kv "$OURS_T1" gemm_gflops)" -v g2="$(kv "$OURS_T2" gemm_gflops)" \
    -v c1="$(kv "$OURS_T1" ceiling_gflops)" -v c2="$(kv "$OURS_T2" ceiling_gflops)" -v cn="$CEILING_N" \
    -v n="$SENTENCES" -v gs="$GREEDY_S" -v bs="$BEAM_S" \
    -v pts="$(kv "$TORCH_TR" sentences_per_s)" -v ptn="$(kv "$TORCH_TR" sentences)" \
    -v lo="$LAT_OURS" -v lp="$LAT_TORCH" -v r1="$RSS_ONE" -v ra="$RSS_ALL" -v mb="$MODEL_BYTES" \
    -v pm1="$(kv "$TORCH_T1" matmul_gflops)" -v pm2="$(kv "$TORCH_T2" matmul_gflops)" \
    -v torch="$HAVE_TORCH" -v scale="$SCALE_ROWS" -v sn="$SCALE_N" -v D="$D_MODEL" -v F="$D_FF" '
    function num(x) { return x != "" && x + 0 > 0 }
    function fmt(x, f) { return num(x) ? sprintf(f, x) : "n/a" }
    function other(x, f) { return num(x) ? sprintf(f, x) : (torch ? "failed" : "skipped (no torch)") }
    function verdict(ok, have) { return have ? (ok ? "met" : "missed") : "—" }
    function row(id, what, ours, theirs, ratio, target, v) {
        printf "| %s | %s | %s | %s | %s | %s | %s |\n", id, what, ours, theirs, ratio, target, v }
    BEGIN {
        h = num(o1) && num(p1)
        row("train-1t", "training, tokens/s (source + target), 1 thread", fmt(o1, "%.0f"), other(p1, "%.0f"),
            h ? sprintf("%.2f×", o1 / p1) : "—", "—", "")
        h = num(o2) && num(p2)
        row("train-2t", "training, tokens/s (source + target), 2 threads", fmt(o2, "%.0f"), other(p2, "%.0f"),
            h ? sprintf("%.2f×", o2 / p2) : "—", "≥ 2× PyTorch", verdict(h && o2 >= 2 * p2, h))
        h = num(g1) && num(c1)
        row("gemm-1t", "training: matmul GF/s vs our " cn "³ gemm_nt, 1 thread", fmt(g1, "%.1f"),
            fmt(c1, "%.1f") " (ceiling)", h ? sprintf("%.0f%%", 100 * g1 / c1) : "—", "—", "")
        h = num(g2) && num(c2)
        row("gemm-2t", "training: matmul GF/s vs our " cn "³ gemm_nt, 2 threads", fmt(g2, "%.1f"),
            fmt(c2, "%.1f") " (ceiling)", h ? sprintf("%.0f%%", 100 * g2 / c2) : "—", "≥ 40% of ceiling",
            verdict(h && g2 >= 0.4 * c2, h))
        h = num(c1) && num(pm1)
        row("blas-1t", "the GEMMs underneath: " cn "³ product GF/s, ours vs PyTorch (its BLAS), 1 thread",
            fmt(c1, "%.1f"), other(pm1, "%.1f"), h ? sprintf("%.1f×", c1 / pm1) : "—", "—", "")
        h = num(c2) && num(pm2)
        row("blas-2t", "the GEMMs underneath: " cn "³ product GF/s, ours vs PyTorch (its BLAS), 2 threads",
            fmt(c2, "%.1f"), other(pm2, "%.1f"), h ? sprintf("%.1f×", c2 / pm2) : "—", "—", "")
        og = num(gs) ? n / gs : 0
        h = og && num(pts)
        row("greedy", "greedy translation, sentences/s, 1 thread, one at a time (" n " lines" \
            (num(ptn) && ptn + 0 < n + 0 ? "; PyTorch on " ptn " of them, evenly spaced" : "") ")",
            fmt(og, "%.1f"), other(pts, "%.1f"), h ? sprintf("%.1f×", og / pts) : "—", "≥ 20× PyTorch",
            verdict(h && og >= 20 * pts, h))
        ob = num(bs) ? n / bs : 0
        h = og && ob
        row("beam4", "beam 4, sentences/s, 1 thread (reference: our greedy)", fmt(ob, "%.1f"),
            fmt(og, "%.1f") " (greedy)", h ? sprintf("%.2f× the cost", bs / gs) : "—", "≤ 3× greedy",
            verdict(h && bs <= 3 * gs, h))
        h = num(lo)
        row("latency", "fresh process, \"I love china\", ms (default threads; PyTorch: 1)", fmt(1000 * lo, "%.1f"),
            other(1000 * lp, "%.0f"), h && num(lp) ? sprintf("%.0f× faster", lp / lo) : "—", "< 20 ms",
            verdict(h && lo < 0.020, h))
        mmb = mb / 1048576
        h = num(r1)
        row("rss-1", "peak RSS, one sentence, MB (reference: model file)", fmt(r1 / 1024, "%.1f"),
            sprintf("%.1f (file)", mmb), h ? sprintf("%.2f× file", r1 * 1024 / mb) : "—",
            "< 1.5× file + 16 MB", verdict(h && r1 * 1024 < 1.5 * mb + 16 * 1048576, h))
        h = num(ra)
        row("rss-batch", "peak RSS, " n "-line batch, MB", fmt(ra / 1024, "%.1f"), sprintf("%.1f (file)", mmb),
            h ? sprintf("%.2f× file", ra * 1024 / mb) : "—", "—", "")
        split(scale, lines, ";")
        names[1] = "scale-short"; names[2] = "scale-mid"; names[3] = "scale-max"
        for (i = 1; i <= 3; i++) {
            split(lines[i], f, " ")          # L t1 t2 output_tokens
            S = f[1]; per = num(f[2]) && num(f[3]) ? (f[3] - f[2]) / sn : 0
            share = 100 * S / (2 * D + F + S) # attention share of encoder FLOPs
            row(names[i], sprintf("ms per sentence, %d source tokens (≈ %.0f output tokens; " \
                "attention %.1f%% of encoder FLOPs)", S, f[4] / sn, share),
                per > 0 ? sprintf("%.2f", 1000 * per) : "n/a", "—",
                per > 0 && f[4] > 0 ? sprintf("%.2f ms/output token", 1000 * per * sn / f[4]) : "—", "—", "")
        }
    }'
echo
echo "How: training = build/bench/train_bench (bench/train_bench.c) vs tools/bench_torch.py train,"
echo "the same $STEPS batches (after $WARMUP warm-up steps) from the same initial weights, dropout on,"
echo "AdamW, clipping; PyTorch pads its batches, the tokens counted are the real ones on both sides."
echo "Ours: the median of $TRAIN_RUNS runs by tokens/s (the row's GF/s and ceiling come from that run)."
echo "The matmul GF/s count only the linear layers' GEMMs (3× the forward FLOPs), over the whole step time."
echo "Translation = ./translate -q -t 1 -b 1 (or -b 4) < the data's source column, wall time incl. start-up;"
echo "PyTorch = tools/reference.py's greedy loop (no KV cache) on the same token ids, 1 thread."
echo "Latency = mean of $LAT_RUNS runs (PyTorch: $PY_LAT_RUNS), $(command -v hyperfine > /dev/null && echo hyperfine || echo a shell loop)."
echo "Scaling = (time of the file twice − time of the file once) / $SCALE_N sentences per length."
[ -e "$TMP/failed" ] && FAILED=1
exit $FAILED
