#!/bin/sh
# Run every test program given and finish with one summary line
# "N passed, N failed" counting cmocka test cases.  Exit 1 if any failed
# (or if a test program crashed without reporting).
passed=0; failed=0; crashed=0
for t in "$@"; do
    log=$(mktemp)
    "$t" >"$log" 2>&1
    status=$?
    cat "$log"
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
    f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
    passed=$((passed + p)); failed=$((failed + f))
    if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "run_tests: $t exited with status $status"; crashed=$((crashed + 1)); failed=$((failed + 1))
    fi
    rm -f "$log"
done
echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
