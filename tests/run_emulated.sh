#!/bin/sh
# The whole suite with our programs run by an emulator (make test-aarch64,
# make test-avx2):
#     sh tests/run_emulated.sh RUN_DIR 'RUNNER' PROGRAM...
# RUN_DIR is the scripts' own folder: it is removed and made anew on each
# run (build-aarch64/run, build/avx2-run).  For each PROGRAM it writes a
# script RUN_DIR/NAME (RUN_DIR/tests/NAME for
# a program under a tests/ folder) that execs RUNNER on it, then runs the
# test programs' scripts through tests/run_tests.sh with TEST_BIN_DIR set
# to RUN_DIR, so that the tests' ./translate and ./train are emulated too.
# A script, not the program itself: an emulated program cannot be exec'ed
# without binfmt_misc, and a test starts the programs it tests by name.
# TEST_EMULATED=1 lets a test skip what would take too long emulated (the
# whole dev set through the models, say); programs the tests start by an
# absolute path (python3, chromium, the bench's build/ programs) run
# natively.
set -e
[ $# -ge 3 ] || { echo "usage: sh tests/run_emulated.sh RUN_DIR 'RUNNER' PROGRAM..." >&2; exit 2; }
dir=$1 runner=$2
shift 2
case " $* " in
*/tests/*) ;;
*) echo "run_emulated.sh: no test program (under a tests/ folder) among the programs" >&2; exit 2 ;;
esac
rm -rf "$dir"
mkdir -p "$dir/tests"
tests=
for program in "$@"; do
    name=${program##*/}
    case $program in
    */tests/*) script=$dir/tests/$name; tests="$tests $script" ;;
    *) script=$dir/$name ;;
    esac
    printf '#!/bin/sh\nexec %s "%s" "$@"\n' "$runner" "$(cd "$(dirname "$program")" && pwd)/$name" >"$script"
    chmod +x "$script"
done
# shellcheck disable=SC2086 # one word per script: a RUN_DIR with spaces is not supported
TEST_BIN_DIR=$dir TRANSLATE_HOME=$(pwd) TEST_EMULATED=1 exec sh tests/run_tests.sh $tests
