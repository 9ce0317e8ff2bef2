#!/bin/bash
# Mutation testing (issue 17): apply each deliberate bug of
# tests/mutation/mutants.txt, one at a time, to a scratch copy of the tree,
# rebuild incrementally, run only the test programs that cover it, and
# print a table and the score (caught / total).
#
#   sh tests/mutation/run.sh [all|sample|ID...]     (make mutation [MUTANTS=...])
#   MUTATION_TORCH=1   run the tests with python3-torch visible (default:
#                      hidden, as in `make test-no-torch`, so the score is the
#                      torch-free suite's)
#   MUTATION_LIST=F    another list of mutants (default tests/mutation/mutants.txt)
#   MUTATION_TIMEOUT=S per test program (default 300): a program still
#                      running then is killed, and the mutant counted caught
#                      ("timeout": a hang is a failure the suite reports)
#
# The scratch copy is build-mutation/src: the tracked files (and the
# untracked shipped weights) copied once, kept between runs and refreshed
# with `cp -u`, built there with -j2.  For each mutant only its file is
# swapped: the original source and object are saved, the mutant built (its
# object and the covering programs relinked), the tests run, and both files
# put back with their old times; the object is then touched, so whatever
# was linked with the mutant is relinked before it is used again.
#
# Results: caught (a covering test failed, or timed out), survived (every
# covering test passed), invalid (the mutant does not compile: not a test
# result; fix the mutant), no-longer-applies (its original text does not
# occur exactly once in the file: the source drifted; update the mutant).
# Exit status 1 if anything survived, was invalid or no longer applied;
# 2 before any mutant runs when a mutant anywhere in the list no longer
# applies (or an id is given twice), whichever mutants are selected.
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
list=${MUTATION_LIST:-"$repo/tests/mutation/mutants.txt"}
out="$repo/build-mutation"
src="$out/src"
timeout=${MUTATION_TIMEOUT:-300}
[ $# -eq 0 ] && set -- all
start=$(date +%s)

# ---- the mutants: one directory per mutant with file, tests, what, orig, repl
if grep -q $'\r' "$list"; then
    echo "mutation: $list has CR line endings (CRLF): its texts would match nothing" >&2; exit 2
fi
rm -rf "$out/m"; mkdir -p "$out/m" "$out/logs"
awk -v dir="$out/m" '
    function flush() { if (id != "") { close(d "/orig"); close(d "/repl") } }
    /^@ / {
        flush()
        n = split(substr($0, 3), f, "|")
        for (i = 1; i <= n; i++) { gsub(/^ +| +$/, "", f[i]) }
        id = f[1]; d = dir "/" id; system("mkdir -p \"" d "\"")
        print f[2] > (d "/file"); close(d "/file")
        print f[3] > (d "/tests"); close(d "/tests")
        print (n >= 4 ? f[4] : "") > (d "/tags"); close(d "/tags")
        printf "" > (d "/orig"); printf "" > (d "/repl"); no = 0; nr = 0
        print id >> (dir "/ORDER"); next }
    id == "" { next }
    /^# / { print substr($0, 3) > (d "/what"); close(d "/what"); next }
    /^-( |$)/ { printf "%s%s", (no++ ? "\n" : ""), substr($0, 3) > (d "/orig"); next }
    /^\+( |$)/ { printf "%s%s", (nr++ ? "\n" : ""), substr($0, 3) > (d "/repl"); next }
    END { flush() }
' "$list"

selected=()
for want in "$@"; do
    while read -r id; do
        case "$want" in
        all) selected+=("$id") ;;
        sample) grep -qw sample "$out/m/$id/tags" && selected+=("$id") ;;
        "$id") selected+=("$id") ;;
        esac
    done <"$out/m/ORDER"
done
[ ${#selected[@]} -gt 0 ] || { echo "mutation: no mutant matches: $*" >&2; exit 2; }

# ---- the scratch copy, built once (later runs rebuild what changed)
mkdir -p "$src"
# (not -p: a file copied gets the copy's time, so that make rebuilds it even
# where restore() below touched its object after the file was edited here,
# as during a run: the object then looked newer than the new source)
(cd "$repo" && git ls-files -z | xargs -0 cp -u --parents -t "$src" &&
 { ls weights/*.safetensors >/dev/null 2>&1 && cp -p -u weights/*.safetensors "$src/weights/" || true; })
# tests read ../shared/data relative to the tree
[ -e "$out/shared" ] || ln -s "$(cd "$repo/.." && pwd)/shared" "$out/shared"
cd "$src" || exit 2
# Every mutant of the list, whatever is selected, must still apply: its
# original text once in its .c file, its id once in the list.  A rewrite
# of the source had left one mutant's text behind for weeks unseen (only a
# run of all of them said so); CI's `make mutation MUTANTS=sample` now does.
drifted=$(sort "$out/m/ORDER" | uniq -d | sed 's/$/: id given twice/'
          while read -r id; do
              m="$out/m/$id"; file=$(cat "$m/file")
              # the repo's, not only the scratch copy's: a file deleted there stays here
              if [ ! -f "$repo/$file" ] || [ ! -f "$file" ]; then echo "$id: $file: no such file"; continue; fi
              [ "${file%.c}" = "$file" ] && { echo "$id: $file: not a .c file"; continue; }
              # (an empty text would be found everywhere, and index() never move on)
              [ -s "$m/orig" ] || { echo "$id: no original text (its '- ' lines)"; continue; }
              n=$(ORIG="$m/orig" perl -0777 -ne '
                  BEGIN { local $/; open my $o, "<", $ENV{ORIG} or die; $orig = <$o> }
                  my $i = 0; my $n = 0; while (($i = index($_, $orig, $i)) >= 0) { $n++; $i += length $orig }
                  print $n' "$file")
              [ "$n" = 1 ] || echo "$id: $file: its original text occurs $n times"
          done < <(awk '!seen[$0]++' "$out/m/ORDER"))
if [ -n "$drifted" ]; then
    echo "mutation: the list no longer matches the source (update these mutants):" >&2
    echo "$drifted" | sed 's/^/  /' >&2
    exit 2
fi
if [ "${MUTATION_TORCH:-0}" != 1 ]; then
    export PYTHONPATH="$src/tests/no-torch${PYTHONPATH:+:$PYTHONPATH}"
fi
all_tests=$(for id in "${selected[@]}"; do cat "$out/m/$id/tests"; done | tr ' ' '\n' | sort -u | grep .)
bins=$(for t in $all_tests; do echo build/tests/$t; done)
echo "mutation: building the scratch copy ($src) ..."
if ! make -j2 --no-print-directory translate train $bins >"$out/logs/build.log" 2>&1; then
    echo "mutation: the unmutated tree does not build: $out/logs/build.log" >&2; exit 2
fi
# Baseline: every covering program must pass on the unmutated tree, or a
# "caught" would mean nothing.
echo "mutation: baseline run of $(echo $all_tests | wc -w) test programs ..."
for t in $all_tests; do
    if ! timeout -k 5 "$timeout" "build/tests/$t" >"$out/logs/baseline-$t.log" 2>&1; then
        echo "mutation: $t fails on the unmutated tree: $out/logs/baseline-$t.log" >&2; exit 2
    fi
done
base_secs=$(( $(date +%s) - start ))

# ---- one mutant
restore() { # file: put the original source and object back, force relinks
    cp -p "$out/saved.c" "$1"
    if [ -e "$out/saved.o" ]; then cp -p "$out/saved.o" "build/${1%.c}.o"; touch "build/${1%.c}.o"; fi
    [ -e "$out/saved.d" ] && cp -p "$out/saved.d" "build/${1%.c}.d"
    rm -f "$out/saved.c" "$out/saved.o" "$out/saved.d"
}
results="$out/results.tsv"; : >"$results"
for id in "${selected[@]}"; do
    m="$out/m/$id"; file=$(cat "$m/file"); tests=$(cat "$m/tests")
    module=${file#*/}; module=${module%.c}
    log="$out/logs/$id.log"; : >"$log"
    result=; by=-
    if [ ! -f "$file" ]; then
        result=no-longer-applies; by="$file: no such file"
    elif [ ! -s "$m/orig" ]; then
        result=invalid; by="no original text (its '- ' lines)"
    elif [ "${file%.c}" = "$file" ]; then
        # restoring a header's old time would leave objects built with the
        # mutant looking up to date: mutants go in .c files only
        result=invalid; by="$file: not a .c file"
    else
        cp -p "$file" "$out/saved.c"
        [ -e "build/${file%.c}.o" ] && cp -p "build/${file%.c}.o" "$out/saved.o"
        [ -e "build/${file%.c}.d" ] && cp -p "build/${file%.c}.d" "$out/saved.d"
        n=$(ORIG="$m/orig" REPL="$m/repl" perl -0777 -i -pe '
            BEGIN { local $/; open my $o, "<", $ENV{ORIG} or die; $orig = <$o>;
                    open my $r, "<", $ENV{REPL} or die; $repl = <$r>; $n = 0 }
            my $i = 0; while (($i = index($_, $orig, $i)) >= 0) { $n++; $i += length $orig }
            if ($n == 1) { my $at = index($_, $orig); substr($_, $at, length $orig) = $repl }
            END { open my $c, ">", "/dev/fd/3"; print $c $n }' "$file" 3>&1 >/dev/null)
        if [ "$n" != 1 ]; then
            result=no-longer-applies; by="original text occurs $n times"
        elif ! make -j2 --no-print-directory translate train \
                 $(for t in $tests; do echo build/tests/$t; done) >>"$log" 2>&1; then
            result=invalid; by="does not compile (see $log)"
        else
            for t in $tests; do
                echo "==== $t" >>"$log"
                # (the group's stderr: bash's own "Aborted" line for a test
                # killed by a signal, which the log already tells)
                { timeout -k 5 "$timeout" "build/tests/$t" >>"$log" 2>&1; rc=$?; } 2>/dev/null
                if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then result=caught; by="$t (timeout)"; break
                elif [ $rc -ne 0 ]; then
                    result=caught
                    first=$(sed -n 's/^\[  FAILED  \] \([^ ]*\)$/\1/p' "$log" | head -1)
                    by="$t${first:+: $first}"; break
                fi
            done
            [ -n "$result" ] || { result=survived; by="($tests all pass)"; }
        fi
        restore "$file"
    fi
    printf '%s\t%s\t%s\t%s\n' "$id" "$module" "$result" "$by" >>"$results"
    printf '%-28s %-14s %-18s %s\n' "$id" "$module" "$result" "$by"
done

# ---- the table and the score
secs=$(( $(date +%s) - start ))
echo
awk -F '\t' -v secs="$secs" -v base="$base_secs" -v torch="${MUTATION_TORCH:-0}" '
    { n++; c[$3]++; mod[$2]++; if ($3 == "caught") modc[$2]++
      row[n] = sprintf("| %s | %s | %s | %s |", $1, $2, $3, $4) }
    END {
        print "| mutant | module | result | caught by |"
        print "|---|---|---|---|"
        for (i = 1; i <= n; i++) print row[i]
        print ""
        printf "mutation score: %d/%d caught (%.1f%%)", c["caught"], n, n ? 100 * c["caught"] / n : 0
        printf "; %d survived, %d invalid, %d no longer apply", c["survived"], c["invalid"], c["no-longer-applies"]
        printf "; torch %s; %d s (baseline %d s)\n", torch == 1 ? "visible" : "hidden", secs, base
    }' "$results"
! grep -qP '\t(survived|invalid|no-longer-applies)\t' "$results"
