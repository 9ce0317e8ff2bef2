#!/bin/sh
# Run fuzz targets with libFuzzer for a bounded time each (make fuzz).
#
#   sh tests/fuzz/run.sh SECONDS TARGET...
#   FUZZ_RUNS=N sh tests/fuzz/run.sh SECONDS TARGET...
#
# FUZZ_RUNS also stops each target after N executions (libFuzzer's -runs),
# for a campaign that wants a number of executions rather than a time.
# FUZZ_FORK=N runs N fuzzing processes of each target side by side
# (libFuzzer's -fork=N, sharing the corpus), one per core; -runs does not
# apply there, so FUZZ_RUNS is ignored.
#
# Each build-fuzz/fuzz_<target> starts from its committed cases
# (tests/fuzz/corpus/<target>/), the inputs found by earlier runs
# (build-fuzz/corpus/<target>/, where new ones are written) and seeds taken
# from our own files (configs, vocabularies, the tiny model, the tiny TSV).
# A crash leaves its input as build-fuzz/crash-<target>-*; minimise it
# (build-fuzz/fuzz_<target> -minimize_crash=1 FILE), fix the bug and commit
# the case under tests/fuzz/corpus/<target>/ so `make test` replays it.
#
# Ends with one line per target (executions, executions per second,
# coverage, result) and the same runs as rows for tests/fuzz/RUNS.md, the
# committed record of every campaign (also appended to build-fuzz/runs.md).
set -u
seconds=$1; shift
[ -f tests/data/tiny.safetensors ] || ./translate -q -c configs/tiny.yaml I >/dev/null
cpu=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo | head -1)
summary=""
rows=""
# The command the rows name (make fuzz passes its own).
command=${FUZZ_COMMAND:-"${FUZZ_FORK:+FUZZ_FORK=$FUZZ_FORK }${FUZZ_RUNS:+FUZZ_RUNS=$FUZZ_RUNS }sh tests/fuzz/run.sh $seconds $*"}
status=0
for t in "$@"; do
    seeds=build-fuzz/seeds/$t
    rm -rf "$seeds"; mkdir -p "$seeds" "build-fuzz/corpus/$t"
    # libFuzzer's default -max_len is 4096 (or the largest seed): the
    # tokenizer and the line reader take longer inputs (a TEXT argument
    # up to 128 KiB, lines up to 65,536 bytes), and the stream-safe limit
    # of the tokenizer only shows past 30 marks in a row.
    # The tokenizer is linear in its input (stream-safe text, UAX #15): an
    # input that takes it 2 s, sanitizers and all, is a bug to report.
    max_len=""
    timeout=10
    case $t in
    config)      cp configs/*.yaml tests/data/*.yaml "$seeds"/ ;;
    vocab)       cp tests/data/*.vocab "$seeds"/ ;;
    safetensors) cp tests/data/tiny.safetensors "$seeds"/ ;;
    dataset)     cp tests/data/tiny.tsv "$seeds"/ ;;
    lines)       cp tests/data/tiny.tsv "$seeds"/; max_len=-max_len=140000 ;;
    tokenizer)   i=0
                 cut -f1,2 tests/data/tiny.tsv | tr '\t' '\n' | while IFS= read -r line; do
                     i=$((i + 1)); printf '%s' "$line" > "$seeds/line$i"
                 done
                 max_len=-max_len=140000; timeout=2 ;;
    esac
    log=build-fuzz/$t.log
    echo "fuzz: $t for $seconds s (log: $log)"
    before=$(ls build-fuzz/crash-$t-* 2>/dev/null | wc -l)
    runs_limit=""
    [ -n "${FUZZ_RUNS:-}" ] && runs_limit=-runs=$FUZZ_RUNS
    [ -n "${FUZZ_FORK:-}" ] && runs_limit=-fork=$FUZZ_FORK
    build-fuzz/fuzz_$t -max_total_time="$seconds" $runs_limit -timeout=$timeout -rss_limit_mb=2048 $max_len \
        -print_final_stats=1 -artifact_prefix="build-fuzz/crash-$t-" \
        "build-fuzz/corpus/$t" "tests/fuzz/corpus/$t" "$seeds" >"$log" 2>&1
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    if [ -n "${FUZZ_FORK:-}" ]; then # no stats: its last "#N: ... exec/s R" line
        runs=$(sed -n 's/^#\([0-9]*\): .*/\1/p' "$log" | tail -n 1)
        rate=$(sed -n 's/^#[0-9]*: .* exec\/s \([0-9]*\) .*/\1/p' "$log" | tail -n 1)
    fi
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
    crashes=$(( $(ls build-fuzz/crash-$t-* 2>/dev/null | wc -l) - before ))
    if [ $rc -eq 0 ]; then result=ok; else result="FAILED (status $rc, see $log)"; status=1; fi
    summary="$summary$t: ${runs:-?} runs, ${rate:-?}/s, $cov, $result
"
    elapsed=$(sed -n -e 's/.*Done [0-9]* runs in \([0-9]*\) second.*/\1/p' \
                     -e 's/^INFO: exiting: [0-9]* time: \([0-9]*\)s.*/\1/p' "$log" | tail -n 1)
    rows="$rows| $(date -u +%Y-%m-%d) | $cpu | $t | ${elapsed:-$seconds} | ${runs:-?} | $crashes | \`$command\` |
"
done
echo
printf '%s' "$summary"
echo
echo "rows for tests/fuzz/RUNS.md:"
printf '%s' "$rows" | tee -a build-fuzz/runs.md
exit $status
