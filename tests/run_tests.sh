#!/bin/sh
# Run every test program given and finish with one summary line
#     N passed, M failed, K skipped
# counting cmocka test cases (it starts "N passed, M failed" for whatever
# greps that).  Exit 1 if any test failed, a program crashed without
# reporting, or a test was killed for taking too long.
#
# Skips are visible: each skipped test is listed with its program and the
# reason it printed just before skip() ("skipped [TAG]: REASON", see
# SKIP_TEST in tests/testutil.h).
#   TRANSLATE_REQUIRE="torch browser"  (.ci/run sets it) a skip whose TAG is
#                   one of these words counts as a failure: what must run
#                   there did not.  REQUIRE_ALL_TESTS=1: every skip does.
#   TEST_TIMEOUT=S  (default 900) when a program starts no new test for S
#                   seconds (cmocka's "[ RUN ]" lines; testutil.c makes its
#                   stdout line-buffered), it is killed with its whole
#                   process group and the test it was running (or its group
#                   setup) is counted as a failure, by name.
passed=0; failed=0; skipped=0
timeout=${TEST_TIMEOUT:-900}
skips=$(mktemp); failures=$(mktemp); log=; child=; dog=
trap 'rm -f "$skips" "$skips.counted" "$failures" ${log:+"$log" "$log.timeout"}' EXIT
trap '[ -n "$child" ] && kill -KILL -"$child" 2>/dev/null; exit 130' INT TERM

# Count the "[ RUN ]" lines of $log every second; kill the program's
# process group (it runs in its own session) when none came for $timeout s.
watchdog() {
    seen=-1; idle=0
    while kill -0 "$1" 2>/dev/null; do
        sleep 1
        now=$(grep -c '^\[ RUN      \] ' "$log")
        if [ "$now" != "$seen" ]; then seen=$now; idle=0; else idle=$((idle + 1)); fi
        if [ "$idle" -ge "$timeout" ]; then
            : >"$log.timeout"
            kill -TERM -"$1" 2>/dev/null; sleep 5; kill -KILL -"$1" 2>/dev/null
            return
        fi
    done
}

for t in "$@"; do
    log=$(mktemp)
    setsid -w "$t" >"$log" 2>&1 &
    child=$!
    watchdog "$child" &
    dog=$!
    wait "$child"
    status=$?
    kill "$dog" 2>/dev/null; wait "$dog" 2>/dev/null
    child=
    cat "$log"
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
    f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
    passed=$((passed + p)); failed=$((failed + f))
    sed -n 's/^\[  FAILED  \] \([^ ]*\)$/\1/p' "$log" | sort -u | sed "s|^|$t: |" >>"$failures"
    # One line per skipped test: program, name, tag, reason.  The reason is
    # the last "skipped" line between the test's [ RUN ] and its [ SKIPPED ].
    awk -v prog="$t" '
        /^\[ RUN      \] / { test = substr($0, 14); tag = ""; why = ""; next }
        /^skipped( \[[a-z]+\])?: / && test != "" {
            tag = ""; why = $0
            if (match(why, /^skipped \[[a-z]+\]/)) tag = substr(why, 10, RLENGTH - 10)
            sub(/^skipped( \[[a-z]+\])?: /, "", why); next }
        /^\[  SKIPPED \] / && test != "" && substr($0, 14) == test {
            printf "%s\t%s\t%s\t%s\n", prog, test, tag, why == "" ? "(no reason given)" : why
            test = "" }
        /^\[       OK \] |^\[  FAILED  \] / { test = "" }
    ' "$log" >>"$skips"
    if [ -e "$log.timeout" ]; then
        # cmocka's "[  PASSED  ]" total never came: count the tests that did pass
        passed=$((passed + $(grep -c '^\[       OK \] ' "$log")))
        last=$(awk '/^\[ RUN      \] / { t = substr($0, 14) } /^\[       OK \] |^\[  FAILED  \] |^\[  SKIPPED \] / { t = "" }
                    END { print t == "" ? "(its group setup or teardown)" : t }' "$log")
        echo "run_tests: $t: $last still running after ${timeout}s (TEST_TIMEOUT): killed"
        echo "$t: $last (timed out after ${timeout}s)" >>"$failures"
        failed=$((failed + 1))
        rm -f "$log.timeout"
    elif [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "run_tests: $t exited with status $status"
        echo "$t: (exited with status $status)" >>"$failures"
        failed=$((failed + 1))
    fi
    rm -f "$log"; log=
done

# Skips: listed; those the environment requires become failures.
required=" $TRANSLATE_REQUIRE "
while IFS="$(printf '\t')" read -r prog test tag why; do
    case "$REQUIRE_ALL_TESTS:$required" in
    1:*) because="REQUIRE_ALL_TESTS=1" ;;
    *" ${tag:-untagged} "*) because="TRANSLATE_REQUIRE has $tag" ;;
    *) because= ;;
    esac
    if [ -n "$because" ]; then
        echo "$prog: $test skipped, but required here ($because): $why" >>"$failures"
        failed=$((failed + 1))
    else
        skipped=$((skipped + 1))
        printf '%s\t%s\t%s\t%s\n' "$prog" "$test" "$tag" "$why" >>"$skips.counted"
    fi
done <"$skips"

echo
if [ -s "$skips.counted" ]; then
    echo "Skipped tests:"
    awk -F '\t' '{ printf "  %s: %s — %s%s\n", $1, $2, $3 == "" ? "" : "[" $3 "] ", $4 }' "$skips.counted"
fi
if [ -s "$failures" ]; then
    echo "Failed tests:"
    sed 's/^/  /' "$failures"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
