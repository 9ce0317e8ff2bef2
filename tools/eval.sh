#!/bin/sh
# eval.sh — `make eval`: score the models on the dev sets and write the
# table into docs/models.md (issue 13).
#
#   sh tools/eval.sh [--doc FILE] [--config YAML]... [--set TSV]... [--beams "1 4"]
#
# Defaults: configs/en-zh.yaml and configs/zh-en.yaml, on
# $EVAL_DATA/tatoeba-cmn-eng/dev.tsv and $EVAL_DATA/jec-basic/dev.tsv
# (EVAL_DATA defaults to ../shared/data), each greedy (-b 1) and beam 4,
# written into docs/models.md.  $TRANSLATE is the program (./translate).
# Every set is a TSV of English<TAB>Chinese; each config reads the column
# of its source_language.  Runs are sequential (translate already uses
# every core); each prints one progress line on stderr.
#
# Per run: `translate -q -c CONFIG -b N --eval TSV --hyps H` gives BLEU and
# chrF2, and, for English output, H gives the number of translations with
# a mid-sentence capital (the rule is in mid_capitals below).  Per config
# and set, a greedy `translate -c CONFIG -b 1 -i SOURCES` (no -q) gives
# the number of sources with an <unk>: it prints one "line N: note: K
# unknown word(s) mapped to <unk>" per such line (app/translate_input.c).
#
# The table replaces whatever is between the lines <!-- eval:begin --> and
# <!-- eval:end --> of the doc (each must occur exactly once).  Nothing is
# written until every run has succeeded, and then the new doc is written
# beside the old one and renamed over it: a failed or interrupted run
# leaves the doc as it was.
#
# Exit status: 0 the table was written; 1 a run failed (one line on
# stderr names it and quotes translate's error); 2 usage error, or a
# config, set or the doc's markers are missing.

BEGIN_MARK='<!-- eval:begin -->'
END_MARK='<!-- eval:end -->'
TRANSLATE=${TRANSLATE:-./translate}
data=${EVAL_DATA:-../shared/data}
doc=docs/models.md
configs=
sets=
beams="1 4"

die() { echo "eval.sh: $2" >&2; exit "$1"; }

# The configs and sets are lists of lines, so that a path may hold spaces:
# a loop over one splits at newlines only (IFS=$nl for the list), and its
# body splits as usual again (IFS=$sp).
nl='
'
sp=$IFS

while [ $# -gt 0 ]; do
    case $1 in
    --doc) [ $# -ge 2 ] && [ -n "$2" ] || die 2 "--doc needs a file"; doc=$2; shift 2 ;;
    --config) [ $# -ge 2 ] && [ -n "$2" ] || die 2 "--config needs a file"; configs="$configs$nl$2"; shift 2 ;;
    --set) [ $# -ge 2 ] && [ -n "$2" ] || die 2 "--set needs a file"; sets="$sets$nl$2"; shift 2 ;;
    --beams) [ $# -ge 2 ] || die 2 "--beams needs a list"
             case $2 in *[!' ']*) ;; *) die 2 "--beams needs a list" ;; esac # (not only spaces)
             beams=$2; shift 2 ;;
    *) die 2 "unknown argument '$1' (usage: tools/eval.sh [--doc FILE] [--config YAML]... [--set TSV]... [--beams \"1 4\"])" ;;
    esac
done
configs=${configs:-"configs/en-zh.yaml${nl}configs/zh-en.yaml"}
sets=${sets:-"$data/tatoeba-cmn-eng/dev.tsv$nl$data/jec-basic/dev.tsv"}

# Everything is checked before the first (slow) run.
[ -x "$TRANSLATE" ] || die 2 "$TRANSLATE: not found (run make first)"
IFS=$nl
for f in $configs$nl$sets; do IFS=$sp; [ -z "$f" ] || [ -r "$f" ] || die 2 "$f: cannot read it"; done
IFS=$sp
[ -r "$doc" ] || die 2 "$doc: cannot read it"
# A link is followed, the file it names rewritten and the link kept (a
# rename over the link had replaced it, the real doc left as it was), as
# translate's outputs are; a read-only doc (chmod a-w, or not ours to
# write) is left alone, as they are (common/output_file.h).
if [ -L "$doc" ]; then doc=$(readlink -f -- "$doc") || die 2 "$doc: cannot follow the link"; fi
{ [ -w "$doc" ] && [ -z "$(find "$doc" -prune ! -perm /222)" ]; } ||
    die 2 "$doc: the file is read-only: not rewritten (chmod u+w $doc)"
# Exactly one of each marker, in that order.
marks=$(grep -n -x -F -e "$BEGIN_MARK" -e "$END_MARK" "$doc" | cut -d : -f 2- | tr '\n' ' ')
[ "$marks" = "$BEGIN_MARK $END_MARK " ] ||
    die 2 "$doc: needs one line '$BEGIN_MARK', then one line '$END_MARK'"
for b in $beams; do
    case $b in '' | *[!0-9]*) die 2 "--beams: '$b' is not a number" ;; esac
    [ "$b" -ge 1 ] && [ "$b" -le 64 ] || die 2 "--beams: $b is not a beam width (1 to 64)"
done

tmp=$(mktemp -d) || die 2 "cannot create a temporary folder"
newdoc="$doc.eval-$$.tmp"
child=
trap 'rm -rf "$tmp"; rm -f "$newdoc"' EXIT
trap '[ -n "$child" ] && kill "$child" 2>/dev/null; exit 130' INT TERM HUP

# Run a translate in the background and wait for it, so that an
# interrupted script stops it too (the traps above); its status in $st.
run_bg() { "$@" & child=$!; wait "$child"; st=$?; child=; }

# A config's source_language or target_language (a top-level key), plain
# or quoted as YAML allows ("zh", 'zh').
lang_of() { sed -n "s/^$2:[ ]*[\"']\{0,1\}\([a-z][a-z]*\).*/\1/p" "$1" | head -n 1; }

# The number of lines of $1 (translations) with a word that starts with
# an upper-case letter although it is not sentence-initial (first word, or
# after a word ending in . ? ! or starting with a quote), is not I or I'...
# (I'm, I'll, ...), and occurs written in lower case (first letter lowered,
# the rest as written) in the same line of $2 (references).  A capital the
# reference does not contradict (a name it lacks, an acronym) is not
# counted: the figure is a lower bound of the wrong capitals, never a
# guess.  Words are split at spaces and stripped of what surrounds their
# letters, digits and apostrophes.
mid_capitals() {
    paste "$1" "$2" | awk -F '\t' '
        function bare(w) { gsub(/^[^A-Za-z0-9'\'']+|[^A-Za-z0-9'\'']+$/, "", w); return w }
        {
            split("", lower)
            n = split($2, ref, / +/)
            for (i = 1; i <= n; i++) { w = bare(ref[i]); if (w ~ /^[a-z]/) lower[w] = 1 }
            m = split($1, hyp, / +/); initial = 1; bad = 0
            for (i = 1; i <= m; i++) {
                w = bare(hyp[i])
                if (hyp[i] ~ /^"/) initial = 1
                if (w != "" && !initial && w ~ /^[A-Z]/ && w !~ /^I('\''|$)/ &&
                    (tolower(substr(w, 1, 1)) substr(w, 2)) in lower) bad = 1
                if (hyp[i] ~ /[.?!][")]*$/) initial = 1; else if (w != "") initial = 0
            }
            count += bad
        }
        END { print count + 0 }'
}

# The last two parts of a path: tatoeba-cmn-eng/dev.tsv.
short_name() { echo "$1" | awk -F / '{ print (NF > 1 ? $(NF - 1) "/" : "") $NF }'; }

# One line on stderr naming the failed run, with translate's first error.
run_failed() {
    why=$(grep -v ': note: ' "$2" | head -n 1)
    die 1 "$1: translate exited $3${why:+: $why}"
}

# What is measured, read before the runs (a commit made meanwhile is not it).
commit=$(git rev-parse --short HEAD 2>/dev/null) || commit=unknown
# (Changes to the doc itself do not count: it is what this run rewrites.)
if [ "$commit" != unknown ] &&
    [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null | awk -v doc="$doc" '$2 != doc')" ]; then
    commit="$commit, with uncommitted changes"
fi
cpu=$(sed -n 's/^model name[^:]*: *//p' /proc/cpuinfo 2>/dev/null | head -n 1)
cores=$(getconf _NPROCESSORS_ONLN 2>/dev/null)
started=$(date -u '+%Y-%m-%d %H:%M UTC')

n_runs=0
IFS=$nl
for c in $configs; do for s in $sets; do IFS=$sp; [ -z "$c" ] || [ -z "$s" ] || for b in $beams; do
    n_runs=$((n_runs + 1)); done; IFS=$nl; done; done
IFS=$sp
start=$(date +%s)
load=$(cut -d ' ' -f 1 /proc/loadavg 2>/dev/null)
n_done=0
rows=$tmp/rows
untranslatable=
: >"$rows"
IFS=$nl
for c in $configs; do
    IFS=$sp
    [ -n "$c" ] || continue
    src=$(lang_of "$c" source_language)
    tgt=$(lang_of "$c" target_language)
    case $src in en) col=1 ;; zh) col=2 ;; *) die 2 "$c: no source_language en or zh" ;; esac
    tcol=$((3 - col))
    name=$(basename "$c" .yaml)
    IFS=$nl
    for s in $sets; do
        IFS=$sp
        [ -n "$s" ] || continue
        set_name=$(short_name "$s")
        # Sources with an <unk>: decoding does not change them, one greedy pass.
        cut -f "$col" "$s" >"$tmp/src"
        # the references of the lines --eval reads, so that they pair line
        # for line with its --hyps: it skips blank ones (empty, or spaces
        # alone, after a first line's byte order mark: data/corpus.c)
        awk 'NR == 1 { sub(/^\357\273\277/, "") } { sub(/\r$/, "") } $0 !~ /^ *$/' "$s" | cut -f "$tcol" >"$tmp/ref"
        run_bg "$TRANSLATE" -c "$c" -b 1 -i "$tmp/src" >"$tmp/unk.out" 2>"$tmp/unk.err"
        # Status 1 is a line that could not be translated: --eval counts it.
        [ "$st" -le 1 ] || run_failed "$name on $set_name (counting <unk>)" "$tmp/unk.err" "$st"
        unk=$(grep -c ': note: [0-9]* unknown words* mapped to <unk>' "$tmp/unk.err")
        for b in $beams; do
            n_done=$((n_done + 1))
            if [ "$b" = 1 ]; then how=greedy; else how="beam $b"; fi
            what="$name on $set_name ($how)"
            run_bg "$TRANSLATE" -q -c "$c" -b "$b" --eval "$s" --hyps "$tmp/hyps" >"$tmp/out" 2>"$tmp/err"
            # Status 1: lines it could not translate, each named on stderr,
            # scored as empty and counted in its summary (below).
            [ "$st" -le 1 ] || run_failed "$what" "$tmp/err" "$st"
            # translate prints: PATH: NAME, N sentences: BLEU B  chrF2 C  (HOW; T s, K not translatable),
            # "1 sentence:" for one
            line=$(head -n 1 "$tmp/out")
            scores=$(echo "$line" | sed -n 's/.* \([0-9]*\) sentences*: BLEU \([0-9.]*\)  chrF2 \([0-9.]*\)  (.*; \([0-9.]*\) s, \([0-9]*\) not translatable).*/\1 \2 \3 \4 \5/p')
            # (status 1 without scores: the set itself could not be read)
            [ -n "$scores" ] || [ "$st" -eq 0 ] || run_failed "$what" "$tmp/err" "$st"
            [ -n "$scores" ] || die 1 "$what: cannot read translate's scores in '$line'"
            set -- $scores
            if [ "$tgt" = en ]; then caps=$(mid_capitals "$tmp/hyps" "$tmp/ref"); else caps="–"; fi
            [ "$5" = 0 ] || untranslatable="$untranslatable $what: $5;"
            echo "| $name | $set_name ($1) | $how | $2 | $3 | $caps | $unk | $4 |" >>"$rows"
            echo "eval: [$n_done/$n_runs] $what: BLEU $2, chrF2 $3, mid-sentence capitals $caps, sources with <unk> $unk ($4 s)" >&2
        done
    done
done
IFS=$sp
total=$(($(date +%s) - start))

table=$tmp/table
{
    echo "Measured $started by \`make eval\` (tools/eval.sh), commit $commit,"
    echo "on ${cpu:-$(uname -m)} (${cores:-?} cores; load average ${load:-?} at the start):"
    echo "$n_runs runs in $total s."
    echo
    echo "| model | dev set (sentences) | decoding | BLEU | chrF2 | mid-sentence capitals | sources with \`<unk>\` | seconds |"
    echo "|---|---|---|---|---|---|---|---|"
    cat "$rows"
    if [ -n "$untranslatable" ]; then
        echo
        echo "Not translatable (scored as empty):$untranslatable"
    fi
} >"$table"

# The doc with the table between the markers, beside it (a copy first,
# for the doc's mode: a new file's had replaced it), then renamed over it.
cp -p -- "$doc" "$newdoc" && awk -v table="$table" -v b="$BEGIN_MARK" -v e="$END_MARK" '
    $0 == b { print; while ((getline l < table) > 0) print l; skipping = 1; next }
    $0 == e { skipping = 0 }
    !skipping { print }' "$doc" >"$newdoc" &&
    mv -f "$newdoc" "$doc" || die 1 "$doc: could not write it"
echo "eval: $n_runs runs in $total s; the table is in $doc" >&2
