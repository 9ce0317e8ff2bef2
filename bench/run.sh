#!/bin/sh
# run.sh — `make bench`: our programs and stock PyTorch side by side, on the
# same machine, data and thread counts, in one run, as ONE table.
#
#   sh bench/run.sh            the real benchmark (about 10 minutes)
#   sh bench/run.sh --quick    every part on tiny inputs (configs/tiny.yaml,
#                              tests/data/tiny.tsv): checks the harness, not
#                              the speed; also BENCH_QUICK=1
#
# Needs ./translate and build/bench/{train,gemm,decode}_bench (make bench
# builds them).  The PyTorch columns need Debian's /usr/bin/python3 with
# torch, the OpenBLAS ones libopenblas.so.0 (libopenblas0-pthread; `make
# bench` installs both through tools/deps.sh --with-bench, which also makes
# it torch's BLAS via Debian's alternatives); without them they say
# "skipped".  hyperfine and /usr/bin/time (Debian packages) are
# used when present, else a shell loop / "n/a".
#
# Settings (environment): BENCH_CONFIG (default configs/en-zh.yaml),
# BENCH_DATA (default the Tatoeba dev.tsv), BENCH_TORCH_SENTENCES (how many
# sentences PyTorch translates; default 200, 0 = all),
# BENCH_DECODE_SENTENCES (decode_bench's; default 0 = all),
# BENCH_OPENBLAS_CORETYPE (auto, the default: see section 0; or a core type
# for the reference commands), BENCH_OPENBLAS (the library gemm_bench
# dlopens; default libopenblas.so.0), BENCH_LINE_FLAGS (section 4: the flags that keep
# standard input one line at a time, default --maxi-batch 1).
#
# The parts (issue 6, with issue 12's references and targets; each row
# says met/missed against its target):
#   0. the CPU, its vector flags, our kernel, and the OpenBLAS both
#      references use: its library and core type; where Debian's OpenBLAS
#      0.3.21 mis-detects the CPU (it takes some AVX-512 Xeons for
#      Prescott), OPENBLAS_CORETYPE is set for the reference commands
#      alone, never for our programs, the tests or CI (BENCH_OPENBLAS_CORETYPE
#      overrides the choice; "auto" is the default)
#   1. our GEMM vs OpenBLAS cblas_sgemm on every training shape, nt/nn/tn,
#      1 and 2 threads, every fast kernel this CPU runs (build/bench/gemm_bench)
#      and each kernel's multiply-add peak on one thread (what no product
#      can exceed; gemm_bench measures it), and how near our products come
#   2. training tokens/s (source + target), ours (bench/train_bench.c) vs
#      PyTorch with OpenBLAS (tools/bench_torch.py train) on the same batches
#      from the same initial weights, 1 and 2 threads; our 2-thread scaling;
#      on an AVX-512 machine also 1 thread with our AVX2 products forced
#      against PyTorch with OpenBLAS forced to Haswell; and the bound: our
#      tokens/s if the step's products ran at the peak and nothing else
#      took time, the most any kernel of ours could reach
#   3. greedy batch-1 decoding against its bandwidth bound (bytes of weights
#      per output token, as held in memory, / read bandwidth at that size:
#      build/bench/decode_bench), per fast kernel, in wall and in CPU time; greedy translation of every line, one at a time,
#      1 thread, vs PyTorch's usual greedy loop on the same ids; beam 4
#   4. throughput on files: stdin as translate reads a file (mini-batched) vs
#      line at a time (--maxi-batch 1, the baseline), greedy, in wall and in
#      CPU time; the same with the config's own decoding (beam 4 for
#      en-zh: what a file gets without -b); and --eval's batches
#   5. a fresh process translating "I love china" (vs a fresh python3); the
#      share of it that is not translating (the same process with an empty
#      sentence: start, config, loading and checking the weights), in wall
#      and in CPU time
#   6. peak RSS for one sentence and for the whole batch, vs the model file
#   7. time per sentence for synthetic sources of 8, 32 and max_len-1 tokens
# Exit status: 0, or 1 when one of the measurements failed to run.
set -u
cd "$(dirname "$0")/.." || exit 1

QUICK=${BENCH_QUICK:-0}
[ "${1:-}" = "--quick" ] && QUICK=1
PY=/usr/bin/python3
TRAIN_BENCH=build/bench/train_bench
GEMM_BENCH=build/bench/gemm_bench
DECODE_BENCH=build/bench/decode_bench
TRANSLATE=./translate
if [ "$QUICK" = 1 ]; then
    CONFIG=configs/tiny.yaml; DATA=tests/data/tiny.tsv
    STEPS=2; WARMUP=1; BATCH=100; CEILING_N=256; TRAIN_RUNS=1; FILE_RUNS=1; LAT_RUNS=3; PY_LAT_RUNS=2; SCALE_N=2
    GEMM_ARGS=--quick; DECODE_SENTENCES=0
    TORCH_SENTENCES=${BENCH_TORCH_SENTENCES:-0}
else
    CONFIG=${BENCH_CONFIG:-configs/en-zh.yaml}; DATA=${BENCH_DATA:-../shared/data/tatoeba-cmn-eng/dev.tsv}
    STEPS=5; WARMUP=2; BATCH=2500; CEILING_N=1024; TRAIN_RUNS=3; FILE_RUNS=3; LAT_RUNS=20; PY_LAT_RUNS=5; SCALE_N=4
    # -r 3: each shape's figures are medians of 3 interleaved rounds (ours,
    # then OpenBLAS), so a moment of load on the machine moves both or neither.
    GEMM_ARGS="-r 3"; DECODE_SENTENCES=${BENCH_DECODE_SENTENCES:-0}
    # PyTorch's loop re-runs the whole model at every step: ~5 sentences/s
    # here, so all 1,000 would take minutes; 200 evenly spaced give its rate.
    TORCH_SENTENCES=${BENCH_TORCH_SENTENCES:-200}
fi

for f in "$TRAIN_BENCH" "$GEMM_BENCH" "$DECODE_BENCH" "$TRANSLATE"; do
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
TGT_V=$(wc -l < "$TGT_VOCAB")
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
# BLAS_CORETYPE (section 0), when set, goes to these reference commands only.
torch_threads() {
    n=$1; shift
    env OMP_NUM_THREADS="$n" OPENBLAS_NUM_THREADS="$n" MKL_NUM_THREADS="$n" \
        ${BLAS_CORETYPE:+OPENBLAS_CORETYPE=$BLAS_CORETYPE} "$@"
}
# A failure inside $(...) cannot set a variable of this shell: leave a mark.
failed() { note "failed: $*"; cat "$TMP/err.txt" >&2; : > "$TMP/failed"; }
# Seconds taken by a command (stdin from $1, stdout to $TMP/out.txt); "" on failure.
# The command's CPU seconds (user + system) go to $TMP/cpu.txt: on a shared
# machine wall time counts the time other processes ran, and the ratios of
# two runs (files, start-up) are steadier in CPU time.
timed() {
    input=$1; shift
    t0=$(now)
    if "$@" < "$input" > "$TMP/out.txt" 2> "$TMP/err.txt"; then
        t1=$(now)
        children_cpu > "$TMP/cpu.txt"
        minus "$t1" "$t0"
    else failed "$*"; : > "$TMP/cpu.txt"; fi
}
# User + system seconds of this shell's finished children so far (the
# second line of the `times` builtin, "1m2.5s 0m0.1s"); a subshell starts
# from 0, so inside $(timed ...) that is the timed command (and two dates).
# Written to a file first: in a pipeline `times` would run in a child.
children_cpu() {
    times > "$TMP/times.txt"
    awk 'NR == 2 { s = 0; for (i = 1; i <= 2; i++) { split($i, p, "m"); s += p[1] * 60 + p[2] }
                   printf "%.6f", s }' "$TMP/times.txt"
}
# The shorter of two such timings (for short runs, where noise is large).
best_of_two() {
    a=$(timed "$@"); b=$(timed "$@")
    awk -v a="$a" -v b="$b" 'BEGIN { if (a != "" && b != "") printf "%.6f", a < b ? a : b }'
}
# median_timed INPUT CMD...: timed FILE_RUNS times, each in its own subshell
# (so each CPU figure is its own run's); the median wall seconds, and the
# median CPU seconds in $TMP/cpu.txt.  A file's runs here take 0.5-5 s, and
# single runs moved by ~10% on a shared machine, both sides of a ratio alike.
median_timed() {
    : > "$TMP/walls.txt"; : > "$TMP/cpus.txt"
    for r in $(seq "$FILE_RUNS"); do
        w=$(timed "$@")
        [ -n "$w" ] || { : > "$TMP/cpu.txt"; return; }
        echo "$w" >> "$TMP/walls.txt"; { cat "$TMP/cpu.txt"; echo; } >> "$TMP/cpus.txt"
    done
    mid=$(( (FILE_RUNS + 1) / 2 ))
    sort -n "$TMP/cpus.txt" | awk -v mid=$mid 'NR == mid { printf "%s", $1 }' > "$TMP/cpu.txt"
    sort -n "$TMP/walls.txt" | awk -v mid=$mid 'NR == mid { printf "%s", $1 }'
}
# Mean wall seconds over $1 runs of the command line $2 (words quoted as for
# a shell): hyperfine without a shell in between, or a shell loop.  With a
# third argument "-i", a non-zero exit status is expected, not a failure.
mean_wall() {
    runs=$1; cmd=$2; ignore=${3:-}
    if command -v hyperfine > /dev/null 2>&1; then
        warm=3; [ "$runs" -lt 10 ] && warm=1
        if hyperfine -N $ignore --style none --warmup "$warm" --runs "$runs" --export-csv "$TMP/hf.csv" \
               -- "$cmd" > /dev/null 2> "$TMP/err.txt"; then
            awk -F, 'NR == 2 { print $2; printf "%.6f", $5 + $6 > "'"$TMP/cpu.txt"'" }' "$TMP/hf.csv"
        else failed "$cmd"; fi
        return
    fi
    sh -c "$cmd" > /dev/null 2>&1   # warm up
    c0=$(children_cpu); t0=$(now); i=0
    while [ $i -lt "$runs" ]; do sh -c "$cmd" > /dev/null 2>&1; i=$((i + 1)); done
    awk -v s="$(minus "$(now)" "$t0")" -v n="$runs" 'BEGIN { printf "%.6f", s / n }'
    awk -v a="$c0" -v b="$(children_cpu)" -v n="$runs" 'BEGIN { printf "%.6f", (b - a) / n }' > "$TMP/cpu.txt"
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

# ---- 0. the CPU and the OpenBLAS the references use ---------------------------------
# The CPU time the hypervisor gave other guests while ours wanted it ("steal",
# /proc/stat), over the whole run: on a shared host (the project's KVM machines)
# it reached 20-38% during two-thread training steps while idle it was ~1%,
# and it slows the two-thread rows most.  cpu_ticks prints busy and stolen ticks.
cpu_ticks() { awk '/^cpu / { printf "%.0f %.0f\n", $2 + $3 + $4 + $7 + $8, $9; exit }' /proc/stat 2> /dev/null; }
TICKS_START=$(cpu_ticks)
CPU=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
CPU_FLAGS=$(awk -F': ' '/^flags/ { print $2; exit }' /proc/cpuinfo)
has_flag() { case " $CPU_FLAGS " in *" $1 "*) return 0 ;; esac; return 1; }
VECTOR_FLAGS=$(echo "$CPU_FLAGS" | tr ' ' '\n' | grep -E '^(avx|avx2|fma|f16c|avx512.*)$' | tr '\n' ' ' | sed 's/ $//')
BLAS_INFO=$("$GEMM_BENCH" --openblas-info 2> /dev/null)
BLAS_PATH=$(kv "$BLAS_INFO" openblas); BLAS_DETECTED=$(kv "$BLAS_INFO" corename)
HAVE_BLAS=0; [ -n "$BLAS_PATH" ] && [ "$BLAS_PATH" != none ] && HAVE_BLAS=1
[ $HAVE_BLAS = 1 ] || note "OpenBLAS columns skipped: no libopenblas.so.0 (sh tools/deps.sh --with-bench)"
# Debian's OpenBLAS 0.3.21 (DYNAMIC_ARCH) picks its kernels from the CPU it
# recognises; on CPUs it does not know it falls back to old generic ones
# (PERFORMANCE.md: some AVX-512 Xeons run as "Prescott", a fifth of the
# speed).  A reference that slow would flatter us, so where the detected
# core type does not use the vector width the CPU has, the reference
# commands run with OPENBLAS_CORETYPE naming one that does.
BLAS_CORETYPE=${BENCH_OPENBLAS_CORETYPE:-auto}
WHY="set by BENCH_OPENBLAS_CORETYPE"
if [ "$BLAS_CORETYPE" = auto ]; then
    WHY="a mis-detection: it does not use this CPU's vector width"
    BLAS_CORETYPE=""
    if has_flag avx512f && has_flag avx512bw && has_flag avx512vl && has_flag avx512dq; then
        good="SkylakeX Cooperlake SapphireRapids"; fix=SkylakeX
    elif has_flag avx2 && has_flag fma; then
        good="Haswell Zen SkylakeX Cooperlake SapphireRapids"; fix=Haswell
    else good=$BLAS_DETECTED; fix=""; fi
    case " $good " in *" $BLAS_DETECTED "*) ;; *) [ $HAVE_BLAS = 1 ] && BLAS_CORETYPE=$fix ;; esac
fi
BLAS_CORE=$BLAS_DETECTED
if [ -n "$BLAS_CORETYPE" ] && [ $HAVE_BLAS = 1 ]; then
    BLAS_CORE=$(kv "$(env OPENBLAS_CORETYPE="$BLAS_CORETYPE" "$GEMM_BENCH" --openblas-info 2> /dev/null)" corename)
    note "OpenBLAS detected this CPU as $BLAS_DETECTED: the reference commands run with OPENBLAS_CORETYPE=$BLAS_CORETYPE ($BLAS_CORE)"
fi

# ---- 1. GEMM: ours vs OpenBLAS ---------------------------------------------------------
note "1. GEMM: ours vs OpenBLAS cblas_sgemm on the training shapes (V = $TGT_V), 1 and 2 threads"
# On an AVX-512 machine our AVX2 kernel is measured too (forced): against
# OpenBLAS's AVX-512 kernels it would be judged for the vector width it
# does not use, so its reference is OpenBLAS forced to its AVX2 core type
# (Haswell), as an AVX2-only CPU would run it.
AVX2_CORE=""
if has_flag avx512f && has_flag avx2 && has_flag fma && [ $HAVE_BLAS = 1 ]; then
    AVX2_CORE=$(kv "$(env OPENBLAS_CORETYPE=Haswell "$GEMM_BENCH" --openblas-info 2> /dev/null)" corename)
    { env ${BLAS_CORETYPE:+OPENBLAS_CORETYPE=$BLAS_CORETYPE} "$GEMM_BENCH" $GEMM_ARGS -V "$TGT_V" -k avx512 &&
      env OPENBLAS_CORETYPE=Haswell "$GEMM_BENCH" $GEMM_ARGS -V "$TGT_V" -k avx2; } \
        > "$TMP/gemm.txt" 2> "$TMP/err.txt" || failed "$GEMM_BENCH"
elif ! env ${BLAS_CORETYPE:+OPENBLAS_CORETYPE=$BLAS_CORETYPE} "$GEMM_BENCH" $GEMM_ARGS -V "$TGT_V" \
        > "$TMP/gemm.txt" 2> "$TMP/err.txt"; then
    failed "$GEMM_BENCH"
fi
# One line per kernel and thread count: kernel threads shapes worst_ratio
# worst_shape geomean_ours geomean_openblas geomean_ratio shapes_below_0.95
awk '$1 == "gemm" {
        for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
        key = v["kernel"] " " v["threads"]
        if (!(key in n)) order[++keys] = key
        n[key]++
        if (v["ours"] > 0) lo[key] += log(v["ours"])
        if (v["openblas"] != "none" && v["openblas"] > 0 && v["ours"] > 0) {
            r = v["ours"] / v["openblas"]; lt[key] += log(v["openblas"]); lr[key] += log(r); nb[key]++
            if (!(key in worst) || r < worst[key]) { worst[key] = r; ws[key] = v["form"] "_" v["what"] }
            if (r < 0.95) below[key]++
        }
     }
     END { for (i = 1; i <= keys; i++) { k = order[i]
             printf "%s %d %s %s %.2f %s %s %d\n", k, n[k], (k in worst) ? sprintf("%.3f", worst[k]) : "none",
                    (k in ws) ? ws[k] : "none", exp(lo[k] / n[k]), nb[k] ? sprintf("%.2f", exp(lt[k] / nb[k])) : "none",
                    nb[k] ? sprintf("%.3f", exp(lr[k] / nb[k])) : "none", below[k] } }' "$TMP/gemm.txt" > "$TMP/gemm_sum.txt"

# ---- 2. training ----------------------------------------------------------------
note "2. training: $STEPS timed steps (+$WARMUP warm-up) of ~$BATCH tokens, ours then PyTorch"
# median_train CMD...: CMD (a run that prints tokens_per_s=) TRAIN_RUNS times,
# the line of the median run by tokens/s; "" if a run failed (the median of
# the runs that did not would be another statistic).  Both sides are measured so: one
# run of a few seconds moved by up to 25% between runs on this shared
# machine, PyTorch's as much as ours (3,229-4,238 tokens/s in one day's
# three single runs, nothing changed on its side).
median_train() {
    for r in $(seq "$TRAIN_RUNS"); do
        "$@" 2> "$TMP/err.txt" || { failed "$*"; return; }
    done | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^tokens_per_s=/) print substr($i, 14), $0 }' |
        sort -n | awk -v mid=$(( (TRAIN_RUNS + 1) / 2 )) -v runs="$TRAIN_RUNS" '
            { line[NR] = $0 }
            END { if (NR == runs) { $0 = line[mid]; $1 = ""; sub(/^ /, ""); print } }'
}
# ours_train THREADS [--dump FILE] / torch_train THREADS: each side's median.
ours_train() {
    n=$1; shift
    median_train "$TRAIN_BENCH" -t "$n" -s "$STEPS" -w "$WARMUP" -b "$BATCH" -n "$CEILING_N" "$@" "$CONFIG" "$DATA"
}
torch_train() { median_train torch_threads "$1" "$PY" tools/bench_torch.py train "$TMP/dump.safetensors" "$CEILING_N"; }
OURS_T1=$(ours_train 1 --dump "$TMP/dump.safetensors")
OURS_T2=$(ours_train 2)
TORCH_T1=""; TORCH_T2=""
if [ $HAVE_TORCH = 1 ] && [ -r "$TMP/dump.safetensors" ]; then
    TORCH_T1=$(torch_train 1)
    TORCH_T2=$(torch_train 2)
fi
KERNEL=$(kv "$OURS_T1" kernel)
# On an AVX-512 machine, training with our AVX2 products forced, against
# PyTorch with OpenBLAS forced to its AVX2 core type (as section 1 pairs
# them): what an AVX2-only CPU of this speed would see, 1 thread.  The rest
# of our step (vector.c's loops) still runs as this CPU runs it.
OURS_A2_T1=""; TORCH_A2_T1=""
if [ "$KERNEL" = avx512 ] && has_flag avx2 && has_flag fma; then
    OURS_A2_T1=$(median_train env TRANSLATE_GEMM=avx2 "$TRAIN_BENCH" -t 1 -s "$STEPS" -w "$WARMUP" -b "$BATCH" \
                     -n "$CEILING_N" "$CONFIG" "$DATA")
    if [ $HAVE_TORCH = 1 ] && [ -r "$TMP/dump.safetensors" ]; then
        TORCH_A2_T1=$(BLAS_CORETYPE=Haswell; torch_train 1)
    fi
fi
# Each kernel's multiply-add peak, GF/s on one thread (gemm_bench's "peak" lines).
peak_of() { awk -v k="$1" '$1 == "peak" && $2 == "kernel=" k { split($4, v, "="); print v[2]; exit }' "$TMP/gemm.txt"; }
PEAK=$(peak_of "$KERNEL"); PEAK_AVX2=$(peak_of avx2)

# ---- 3. decoding -------------------------------------------------------------------
note "3. decoding: greedy batch-1 vs its bandwidth bound; $SENTENCES sentences one at a time, 1 thread"
DECODE_KERNELS=$KERNEL
[ "$KERNEL" = avx512 ] && has_flag avx2 && has_flag fma && DECODE_KERNELS="avx512 avx2"
DEC_ROWS=""
for k in $DECODE_KERNELS; do
    line=$(TRANSLATE_GEMM=$k "$DECODE_BENCH" -t 1 -n "$DECODE_SENTENCES" "$CONFIG" "$DATA" 2> "$TMP/err.txt") ||
        { failed "$DECODE_BENCH ($k)"; line=""; }
    [ -n "$line" ] && DEC_ROWS="$DEC_ROWS$line;"
done
# One at a time, as PyTorch's loop translates (standard input from a file
# is otherwise read ahead and mini-batched: section 4).
GREEDY_S=$(timed "$TMP/sources.txt" "$TRANSLATE" -q -t 1 -b 1 --maxi-batch 1 -c "$CONFIG")
BEAM_S=$(timed "$TMP/sources.txt" "$TRANSLATE" -q -t 1 -b 4 --maxi-batch 1 -c "$CONFIG")
# The same greedy run with the products on int8 matrices (--int8, an option:
# its BLEU is in README's "int8 weights").
GREEDY_I8_S=$(timed "$TMP/sources.txt" "$TRANSLATE" -q -t 1 -b 1 --maxi-batch 1 --int8 -c "$CONFIG")
TORCH_TR=""
if [ $HAVE_TORCH = 1 ] && [ -r "$TMP/dump.safetensors" ]; then
    if [ "$TORCH_SENTENCES" -gt 0 ]; then
        TORCH_TR=$(torch_run 1 translate "$WEIGHTS" "$TMP/dump.safetensors" "$TORCH_SENTENCES")
    else
        TORCH_TR=$(torch_run 1 translate "$WEIGHTS" "$TMP/dump.safetensors")
    fi
fi

# ---- 4. throughput on files ----------------------------------------------------------
# Standard input as `translate` reads it (a file: mini-batched, see
# README), against the line-at-a-time baseline (BENCH_LINE_FLAGS, default
# --maxi-batch 1, what a terminal gets) and --eval's batched decoding
# (decode_greedy_many), greedy, default threads.
note "4. files: $SENTENCES lines through stdin vs --eval (greedy, then the config's decoding; default threads)"
STDIN_S=$(median_timed "$TMP/sources.txt" "$TRANSLATE" -q -b 1 -c "$CONFIG"); STDIN_CPU=$(cat "$TMP/cpu.txt")
LINE_FLAGS=${BENCH_LINE_FLAGS:---maxi-batch 1}
if [ -n "$LINE_FLAGS" ]; then
    LINE_S=$(median_timed "$TMP/sources.txt" "$TRANSLATE" -q -b 1 $LINE_FLAGS -c "$CONFIG"); LINE_CPU=$(cat "$TMP/cpu.txt")
else LINE_S=$STDIN_S; LINE_CPU=$STDIN_CPU; fi
# The same with the config's own decoding (en-zh: beam 4), what a file
# gets without -b: the target is about translating a file, not greedy's.
# A file's beam search decodes the hypotheses of several sentences per step
# (beam_decode_many, model/beam.h); line at a time, one sentence's.
STDIN_DEF_S=$(median_timed "$TMP/sources.txt" "$TRANSLATE" -q -c "$CONFIG"); STDIN_DEF_CPU=$(cat "$TMP/cpu.txt")
if [ -n "$LINE_FLAGS" ]; then
    LINE_DEF_S=$(median_timed "$TMP/sources.txt" "$TRANSLATE" -q $LINE_FLAGS -c "$CONFIG"); LINE_DEF_CPU=$(cat "$TMP/cpu.txt")
else LINE_DEF_S=$STDIN_DEF_S; LINE_DEF_CPU=$STDIN_DEF_CPU; fi
DEF_BEAM=$(awk '$1 == "beam:" { print $2; exit }' "$CONFIG"); DEF_BEAM=${DEF_BEAM:-1}
EVAL_S=$(median_timed /dev/null "$TRANSLATE" -q -b 1 -c "$CONFIG" --eval "$DATA")

# ---- 5. fresh-process latency and start-up ----------------------------------------------
note "5. latency: a fresh process translating \"I love china\", and one with an empty sentence"
LAT_OURS=$(mean_wall "$LAT_RUNS" "$TRANSLATE -q -c '$CONFIG' 'I love china'"); LAT_OURS_CPU=$(cat "$TMP/cpu.txt")
# The empty sentence is refused (exit 1) after the config, vocabularies and
# weights are loaded and checked: what is left is the translation's compute.
LAT_EMPTY=$(mean_wall "$LAT_RUNS" "$TRANSLATE -q -c '$CONFIG' ''" -i); LAT_EMPTY_CPU=$(cat "$TMP/cpu.txt")
LAT_TORCH=""
[ $HAVE_TORCH = 1 ] && LAT_TORCH=$(mean_wall "$PY_LAT_RUNS" "env OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
MKL_NUM_THREADS=1 ${BLAS_CORETYPE:+OPENBLAS_CORETYPE=$BLAS_CORETYPE }$PY tools/bench_torch.py sentence '$WEIGHTS' \
'$SRC_VOCAB' '$TGT_VOCAB' 'I love china'")

# ---- 6. memory --------------------------------------------------------------------
note "6. memory: peak RSS"
echo "I love china" > "$TMP/one.txt"
RSS_ONE=$(peak_rss "$TMP/one.txt" "$TRANSLATE" -q -c "$CONFIG")
RSS_ALL=$(peak_rss "$TMP/sources.txt" "$TRANSLATE" -q -t 1 -c "$CONFIG")
[ -x /usr/bin/time ] || note "peak RSS skipped: /usr/bin/time missing (apt-get install time)"

# ---- 7. scaling with the source length ---------------------------------------------
# Synthetic sources of L vocabulary words (letters only, so each word is
# one token), SCALE_N different ones per length.  Time per sentence is
# (T(twice the file) - T(the file)) / SCALE_N: start-up and loading cancel.
MID=32; [ $((MAX_LEN / 2)) -lt $MID ] && MID=$((MAX_LEN / 2))
SCALE_LENGTHS="8 $MID $((MAX_LEN - 1))"
note "7. scaling: sources of $SCALE_LENGTHS tokens, 1 thread"
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
# Shared by the awk programs that print rows.
AWK_LIB='
    function num(x) { return x != "" && x != "none" && x + 0 > 0 }
    function fmt(x, f) { return num(x) ? sprintf(f, x) : "n/a" }
    function other(x, f) { return num(x) ? sprintf(f, x) : (torch ? "failed" : "skipped (no torch)") }
    function blasc(x, f) { return num(x) ? sprintf(f, x) : (blas ? "failed" : "skipped (no OpenBLAS)") }
    function verdict(ok, have) { return have ? (ok ? "met" : "missed") : "—" }
    function row(id, what, ours, theirs, ratio, target, v) {
        printf "| %s | %s | %s | %s | %s | %s | %s |\n", id, what, ours, theirs, ratio, target, v }
    function kv(line, key,   n, f, i) {
        n = split(line, f, " ")
        for (i = 1; i <= n; i++) if (index(f[i], key "=") == 1) return substr(f[i], length(key) + 2)
        return "" }'
TORCH_VERSION=$([ $HAVE_TORCH = 1 ] && "$PY" -c 'import torch; print("torch", torch.__version__)' 2>/dev/null || echo "not available")
echo "# make bench — $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
[ "$QUICK" = 1 ] && { echo "**QUICK MODE** (tiny model, tiny data): checks the harness; the figures mean nothing."; echo; }
echo "CPU: $CPU, $(nproc) cores online; vector flags: ${VECTOR_FLAGS:-none}."
TICKS_END=$(cpu_ticks)
echo "$TICKS_START $TICKS_END" | awk '{ busy = $3 - $1; stolen = $4 - $2
    if (busy + stolen > 0) printf "Steal (the hypervisor ran other guests while this machine wanted its CPUs; /proc/stat) over the run: %.1f%% of busy + stolen time.\n", 100 * stolen / (busy + stolen) }'
echo "Our GEMM kernel: ${KERNEL:-?} (automatic choice)$([ "$DECODE_KERNELS" != "$KERNEL" ] && echo "; also measured: avx2, forced with TRANSLATE_GEMM=avx2"); threads: as each row says."
echo "Config: $CONFIG ($(basename "$WEIGHTS"), $MODEL_BYTES bytes, target vocabulary $TGT_V); data: $DATA ($SENTENCES lines)."
if [ $HAVE_BLAS = 1 ]; then
    echo "OpenBLAS (the GEMM reference, dlopen'ed by gemm_bench): $BLAS_PATH, detected core type $BLAS_DETECTED$([ -n "$BLAS_CORETYPE" ] && echo " ($WHY): OPENBLAS_CORETYPE=$BLAS_CORETYPE set for the OpenBLAS and PyTorch commands only, running $BLAS_CORE")."
else
    echo "OpenBLAS: not installed (libopenblas0-pthread): its columns are skipped."
fi
if [ $HAVE_TORCH = 1 ]; then
    echo "PyTorch: $TORCH_VERSION, BLAS it loaded (/proc/self/maps): $(kv "$TORCH_T1" blas), core type $(kv "$TORCH_T1" corename)$([ -n "$BLAS_CORETYPE" ] && echo " (OPENBLAS_CORETYPE=$BLAS_CORETYPE)")."
else
    echo "PyTorch: not available ($PY cannot import torch): its columns are skipped."
fi
echo
echo "| row | measure | ours | PyTorch / reference | ratio | issue target | verdict |"
echo "|---|---|---:|---:|---:|---|---|"
# GEMM rows, one per kernel and thread count.
awk -v blas="$HAVE_BLAS" -v core="$BLAS_CORE" -v avx2core="$AVX2_CORE" -v auto="$KERNEL" "$AWK_LIB"'
    { k = $1; t = $2; shapes = $3; worst = $4; ws = $5; go = $6; gt = $7; gr = $8; below = $9
      id = "gemm-" (k == auto ? "" : k "-") t "t"
      h = num(worst)
      ref = (k == "avx2" && avx2core != "") ? avx2core ", forced with OPENBLAS_CORETYPE=Haswell" : core
      row(id, sprintf("GEMM GF/s, our %s kernel%s vs OpenBLAS cblas_sgemm (%s), %d training shapes × nt/nn/tn, %d thread%s (geometric means; worst shape: %s)",
                      k, k == auto ? "" : " (forced)", ref, shapes / 3, t, t > 1 ? "s" : "", h ? ws : "—"),
          fmt(go, "%.1f"), blasc(gt, "%.1f"),
          h ? sprintf("%.2f× (worst %.2f×)", gr, worst) : "—", "≥ 0.95× on every shape",
          h ? (below ? sprintf("missed (%d of %d below)", below, shapes) : "met") : "—") }' "$TMP/gemm_sum.txt"
# Against the peak, one row per kernel: our 1-thread geometric mean.
awk -v auto="$KERNEL" -v peaks="avx512=$(peak_of avx512) avx2=$PEAK_AVX2 generic=" "$AWK_LIB"'
    $2 == 1 { k = $1; p = kv(peaks, k); h = num(p) && num($6)
      row("gemm-" (k == auto ? "" : k "-") "peak",
          sprintf("our %s GEMM, 1 thread (the geometric mean above) vs this CPU'"'"'s multiply-add peak at that width (%s GF/s: 12 chains of fused multiply-adds, no loads; gemm_bench)",
                  k, fmt(p, "%.1f")),
          fmt($6, "%.1f"), fmt(p, "%.1f") " (peak)", h ? sprintf("%.0f%% of the peak", 100 * $6 / p) : "—", "—", "") }' "$TMP/gemm_sum.txt"
awk -v o1="$(kv "$OURS_T1" tokens_per_s)" -v o2="$(kv "$OURS_T2" tokens_per_s)" \
    -v g1="$(kv "$OURS_T1" gemm_gflops)" -v peak="$PEAK" -v a1="$(kv "$OURS_A2_T1" tokens_per_s)" \
    -v ag1="$(kv "$OURS_A2_T1" gemm_gflops)" -v pa1="$(kv "$TORCH_A2_T1" tokens_per_s)" -v peak2="$PEAK_AVX2" \
    -v p1="$(kv "$TORCH_T1" tokens_per_s)" -v p2="$(kv "$TORCH_T2" tokens_per_s)" \
    -v n="$SENTENCES" -v gs="$GREEDY_S" -v bs="$BEAM_S" -v g8s="$GREEDY_I8_S" \
    -v pts="$(kv "$TORCH_TR" sentences_per_s)" -v ptn="$(kv "$TORCH_TR" sentences)" \
    -v dec="$DEC_ROWS" -v auto="$KERNEL" \
    -v ss="$STDIN_S" -v ls="$LINE_S" -v es="$EVAL_S" -v lflags="$LINE_FLAGS" \
    -v ssc="$STDIN_CPU" -v lsc="$LINE_CPU" -v sd="$STDIN_DEF_S" -v ld="$LINE_DEF_S" -v sdc="$STDIN_DEF_CPU" \
    -v ldc="$LINE_DEF_CPU" -v dbeam="$DEF_BEAM" -v loc="$LAT_OURS_CPU" -v lec="$LAT_EMPTY_CPU" \
    -v lo="$LAT_OURS" -v le="$LAT_EMPTY" -v lp="$LAT_TORCH" -v r1="$RSS_ONE" -v ra="$RSS_ALL" -v mb="$MODEL_BYTES" \
    -v torch="$HAVE_TORCH" -v blas="$HAVE_BLAS" -v scale="$SCALE_ROWS" -v sn="$SCALE_N" -v D="$D_MODEL" -v F="$D_FF" \
    "$AWK_LIB"'
    BEGIN {
        h = num(o1) && num(p1)
        row("train-1t", "training, tokens/s (source + target), 1 thread, vs PyTorch with its BLAS", fmt(o1, "%.0f"),
            other(p1, "%.0f"), h ? sprintf("%.2f×", o1 / p1) : "—", "≥ 2× PyTorch", verdict(h && o1 >= 2 * p1, h))
        h = num(o2) && num(p2)
        row("train-2t", "training, tokens/s (source + target), 2 threads, vs PyTorch with its BLAS", fmt(o2, "%.0f"),
            other(p2, "%.0f"), h ? sprintf("%.2f×", o2 / p2) : "—", "≥ 2× PyTorch", verdict(h && o2 >= 2 * p2, h))
        # The bound: tokens / (the products'"'"' FLOPs / the peak) = o1 · peak / g1.
        h = num(o1) && num(g1) && num(peak)
        b1 = h ? o1 * peak / g1 : 0
        row("train-1t-bound", sprintf("training at the peak: our tokens/s, 1 thread, were every matrix product at the %s peak (%s GF/s) and the rest of the step free; as measured, the products'"'"' FLOPs ÷ the whole step'"'"'s time = %s GF/s (reference: PyTorch, row train-1t)",
                                      auto, fmt(peak, "%.1f"), fmt(g1, "%.1f")),
            fmt(b1, "%.0f"), other(p1, "%.0f"), h && num(p1) ? sprintf("%.2f× at most", b1 / p1) : "—", "—", "")
        if (a1 != "" || pa1 != "") {
            h = num(a1) && num(pa1)
            row("train-avx2-1t", "training, tokens/s, 1 thread, our avx2 products forced (the rest of the step as this CPU runs it) vs PyTorch with OpenBLAS forced to Haswell",
                fmt(a1, "%.0f"), other(pa1, "%.0f"), h ? sprintf("%.2f×", a1 / pa1) : "—", "≥ 2× PyTorch", verdict(h && a1 >= 2 * pa1, h))
            h = num(a1) && num(ag1) && num(peak2)
            b2 = h ? a1 * peak2 / ag1 : 0
            row("train-avx2-1t-bound", sprintf("the same at the avx2 peak (%s GF/s), the rest of the step free; as measured, %s GF/s",
                                                fmt(peak2, "%.1f"), fmt(ag1, "%.1f")),
                fmt(b2, "%.0f"), other(pa1, "%.0f"), h && num(pa1) ? sprintf("%.2f× at most", b2 / pa1) : "—", "—", "")
        }
        h = num(o1) && num(o2)
        row("train-scale", "training: 2 threads vs 1 thread, ours (reference: our 1 thread)", fmt(o2, "%.0f"),
            fmt(o1, "%.0f") " (1 thread)", h ? sprintf("%.2f×", o2 / o1) : "—", "≥ 1.7×", verdict(h && o2 >= 1.7 * o1, h))
        nd = split(dec, drow, ";")
        for (i = 1; i <= nd; i++) {
            if (drow[i] == "") continue
            k = kv(drow[i], "kernel"); step = kv(drow[i], "step_ms"); bound = kv(drow[i], "bound_ms")
            cpu = kv(drow[i], "cpu_step_ms"); wt = kv(drow[i], "weights")
            h = num(step) && num(bound)
            row("decode-bound" (k == auto ? "" : "-" k),
                sprintf("greedy batch-1, ms per decoder step (%s kernel%s; %.2f MB per token, %s matrices ÷ %.1f GB/s read at that size; %s ms per token incl. the encoder)",
                        k, k == auto ? "" : ", forced", kv(drow[i], "bytes_per_token") / 1e6, wt == "f16" ? "float16" : "float32",
                        kv(drow[i], "bandwidth_gbs"), fmt(kv(drow[i], "token_ms"), "%.3f")),
                fmt(step, "%.3f"), fmt(bound, "%.3f") " (bound)", h ? sprintf("%.2f× the bound", bound / step) : "—",
                "≥ 0.7× the bound", verdict(h && bound / step >= 0.7, h))
            h = num(cpu) && num(bound)
            row("decode-bound-cpu" (k == auto ? "" : "-" k),
                sprintf("the same step in CPU time of the decoding thread (%s kernel; what it costs when other processes share the cores)", k),
                fmt(cpu, "%.3f"), fmt(bound, "%.3f") " (bound)", h ? sprintf("%.2f× the bound", bound / cpu) : "—",
                "≥ 0.7× the bound", verdict(h && bound / cpu >= 0.7, h))
        }
        og = num(gs) ? n / gs : 0
        h = og && num(pts)
        row("greedy", "greedy translation, sentences/s, 1 thread, one at a time (" n " lines" \
            (num(ptn) && ptn + 0 < n + 0 ? "; PyTorch on " ptn " of them, evenly spaced" : "") ")",
            fmt(og, "%.1f"), other(pts, "%.1f"), h ? sprintf("%.1f×", og / pts) : "—", "≥ 20× PyTorch",
            verdict(h && og >= 20 * pts, h))
        o8 = num(g8s) ? n / g8s : 0
        h = o8 && pts
        row("greedy-int8", "the same with --int8 (the matrices quantised to int8 at load: an option), sentences/s",
            fmt(o8, "%.1f"), other(pts, "%.1f"), h ? sprintf("%.1f×", o8 / pts) : "—", "(option; float16: row above)", "")
        ob = num(bs) ? n / bs : 0
        h = og && ob
        row("beam4", "beam 4, sentences/s, 1 thread (reference: our greedy)", fmt(ob, "%.1f"),
            fmt(og, "%.1f") " (greedy)", h ? sprintf("%.2f× the cost", bs / gs) : "—", "≤ 3× greedy",
            verdict(h && bs <= 3 * gs, h))
        os_ = num(ss) ? n / ss : 0; ol = num(ls) ? n / ls : 0
        h = os_ && ol
        row("files", "stdin, " n " lines, greedy, default threads, sentences/s (reference: line at a time" \
            (lflags == "" ? ", which stdin is today" : ", " lflags) ")", fmt(os_, "%.1f"), fmt(ol, "%.1f"),
            h ? sprintf("%.2f×", os_ / ol) : "—", "≥ 3× line at a time", verdict(h && os_ >= 3 * ol, h))
        h = num(ssc) && num(lsc)
        row("files-cpu", "the same two runs in CPU time (user + system; what they cost when other processes share the cores), sentences per CPU second",
            h ? sprintf("%.1f", n / ssc) : "n/a", h ? sprintf("%.1f", n / lsc) : "n/a",
            h ? sprintf("%.2f×", lsc / ssc) : "—", "≥ 3× line at a time", verdict(h && lsc >= 3 * ssc, h))
        h = num(sd) && num(ld)
        row("files-default", "stdin, " n " lines, the config'"'"'s decoding (beam " dbeam "), default threads, sentences/s (reference: line at a time" \
            (lflags == "" ? "" : ", " lflags) "; in CPU time: " (num(sdc) && num(ldc) ? sprintf("%.2f×", ldc / sdc) : "n/a") ")",
            h ? sprintf("%.1f", n / sd) : "n/a", h ? sprintf("%.1f", n / ld) : "n/a", h ? sprintf("%.2f×", ld / sd) : "—", "≥ 3× line at a time",
            verdict(h && ld >= 3 * sd, h))
        oe = num(es) ? n / es : 0
        h = oe && ol
        row("files-eval", "--eval, the same lines batched (decode_greedy_many), sentences/s incl. scoring (reference: line at a time)",
            fmt(oe, "%.1f"), fmt(ol, "%.1f"), h ? sprintf("%.2f×", oe / ol) : "—", "—", "")
        h = num(lo)
        row("latency", "fresh process, \"I love china\", ms (default threads and beam; PyTorch: 1 thread, greedy)",
            fmt(1000 * lo, "%.1f"), other(1000 * lp, "%.0f"), h && num(lp) ? sprintf("%.0f× faster", lp / lo) : "—",
            "< 20 ms", verdict(h && lo < 0.020, h))
        h = num(lo) && num(le)
        row("startup", "of that, everything but translating: the same process with an empty sentence (start, config, loading and checking the weights), ms",
            fmt(1000 * le, "%.1f"), fmt(1000 * lo, "%.1f") " (total)", h ? sprintf("%.0f%% of the total", 100 * le / lo) : "—",
            "≤ 25%", verdict(h && le <= 0.25 * lo, h))
        h = num(loc) && num(lec)
        row("startup-cpu", "the same two in CPU time (user + system per run), ms",
            fmt(1000 * lec, "%.1f"), fmt(1000 * loc, "%.1f") " (total)", h ? sprintf("%.0f%% of the total", 100 * lec / loc) : "—",
            "≤ 25%", verdict(h && lec <= 0.25 * loc, h))
        mmb = mb / 1048576
        h = num(r1)
        row("rss-1", "peak RSS, \"I love china\", MB (reference: model file)", fmt(r1 / 1024, "%.1f"),
            sprintf("%.1f (file)", mmb), h ? sprintf("file + %.1f MB", (r1 * 1024 - mb) / 1048576) : "—",
            "≤ file + 16 MB", verdict(h && r1 * 1024 <= mb + 16 * 1048576, h))
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
echo "How: GEMM = build/bench/gemm_bench (bench/gemm_bench.c): for a batch of R = 32, 512, 2048, 4096 rows"
echo "through each weight W[O,I] of the model (D×D, F×D, D×F, V×D): forward nt (R×O×I), backward nn (R×I×O)"
if [ "$QUICK" = 1 ]; then
    echo "and tn (O×I×R), as model/linear.c calls them; one quick timing each, ours then OpenBLAS"
else
    echo "and tn (O×I×R), as model/linear.c calls them; shape by shape, 3 rounds of (ours, then OpenBLAS), each"
    echo "side's figure the median over the rounds of its best of 7 timings of ~5 ms"
fi
echo "(openblas_set_num_threads), in the same process.  The per-shape figures are below the table."
echo "Peak = gemm_bench's 12 independent chains of vector fused multiply-adds, no loads, 1 thread, the best"
echo "of 5 timings in the thread's CPU time.  A -bound row = our tokens/s × peak ÷ the step's product FLOPs per"
echo "second: our step with every product at the peak and the rest free (tokens/s in wall time against a"
echo "peak in CPU time: on a loaded machine the bound comes out a little high, which an upper bound may)."
echo "Training = build/bench/train_bench vs tools/bench_torch.py train, the same $STEPS batches (after $WARMUP"
echo "warm-up steps) from the same initial weights, dropout on, AdamW, clipping; PyTorch pads its batches,"
echo "the tokens counted are the real ones on both sides.  Each side: the median of $TRAIN_RUNS runs by tokens/s."
[ -n "$OURS_A2_T1" ] && echo "train-avx2-1t: the same with TRANSLATE_GEMM=avx2 for ours and OPENBLAS_CORETYPE=Haswell for PyTorch ($(kv "$TORCH_A2_T1" corename) as it reported)." 
echo "Decoder steps = build/bench/decode_bench: per sentence, decode_greedy with its limit minus with a limit"
echo "of 1 (the encoder and one step), over the T-1 steps; the bound = bytes one step reads (decoder weights"
echo "but cross-attention K/V, the generator) / vec_sum's best GB/s over a buffer that size, one thread."
echo "Translation = ./translate -q -t 1 -b 1 (or -b 4) --maxi-batch 1 < the data's source column: one line"
echo "at a time, wall time incl. start-up;"
echo "PyTorch = tools/reference.py's greedy loop (no KV cache) on the same token ids, 1 thread."
echo "Files = ./translate -q -b 1 < the source column, and ./translate -q -b 1 --eval DATA (default threads); each"
echo "figure (and the line-at-a-time reference) the median of $FILE_RUNS run(s); in CPU time (files-cpu), the"
echo "median of the same runs' CPU seconds."
echo "Latency and start-up = mean of $LAT_RUNS runs (PyTorch: $PY_LAT_RUNS), $(command -v hyperfine > /dev/null && echo hyperfine || echo a shell loop)."
echo "Scaling = (time of the file twice − time of the file once) / $SCALE_N sentences per length."
echo
echo "GEMM per shape, GF/s (ours / OpenBLAS = ratio; shape = weight_Rrows, M×N×K):"
echo
awk '$1 == "gemm" {
        for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
        col = v["kernel"] " " v["threads"] "t"
        if (!(col in seen)) { seen[col] = 1; cols[++nc] = col }
        shape = v["form"] " " v["what"] " " v["m"] "×" v["n"] "×" v["k"]
        if (!(shape in sseen)) { sseen[shape] = 1; shapes[++ns] = shape }
        if (v["openblas"] == "none" || v["openblas"] + 0 == 0) cell[shape, col] = sprintf("%.1f / —", v["ours"])
        else cell[shape, col] = sprintf("%.1f / %.1f = %.2f", v["ours"], v["openblas"], v["ours"] / v["openblas"])
     }
     END {
        if (!ns) { print "(no GEMM figures)"; exit }
        printf "| form | shape | M×N×K |"; for (c = 1; c <= nc; c++) printf " %s |", cols[c]; printf "\n"
        printf "|---|---|---|"; for (c = 1; c <= nc; c++) printf "---:|"; printf "\n"
        for (s = 1; s <= ns; s++) { split(shapes[s], p, " ")
            printf "| %s | %s | %s |", p[1], p[2], p[3]
            for (c = 1; c <= nc; c++) printf " %s |", cell[shapes[s], cols[c]]; printf "\n" }
     }' "$TMP/gemm.txt"
[ -e "$TMP/failed" ] && FAILED=1
exit $FAILED
