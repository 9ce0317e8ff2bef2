#!/bin/sh
# back_translate.sh — `make back-translation`: synthetic (English, Chinese)
# pairs for training the en-zh model (issue 13), written to OUT.
#
#   sh tools/back_translate.sh [--model-commit REV] [--config YAML] [OUT]
#
# The Chinese side is real: the 23,255 sentences of
# $DATA/tatoeba-cmn-mono/sentences.tsv (DATA defaults to ../shared/data),
# Tatoeba sentences that have no English translation in our data and occur
# in no dev or held-out set.  The English side is what a zh-en model makes
# of them (its config's default decoding: greedy in a3a1df0's zh-en.yaml,
# the one make back-translation uses; beam 4 in today's configs/zh-en.yaml):
# Sennrich et al.'s back-translation, which teaches the en-zh decoder
# Chinese it would otherwise never see, whatever the errors of the English
# it is fed.
#
# The model: --config YAML (default configs/zh-en.yaml, the shipped one),
# or --model-commit REV, the zh-en model as committed at REV (its config,
# weights and vocabularies, taken with `git show` into a scratch folder).
# The shipped en-zh model was trained on the pairs from a3a1df0's zh-en
# model (the Makefile's BACK_TRANSLATION_COMMIT): regenerate with that, as
# `make back-translation` does, to get the same file; docs/models.md gives
# its sha256.  $TRANSLATE is the program (./translate).
#
# OUT (default build/data/back-translated.tsv) is English<TAB>Chinese, one
# pair a line, in the order of sentences.tsv.  It is written beside OUT and
# renamed over it only once every line is translated: an interrupted run
# (Ctrl-C, SIGTERM: translate is stopped too) leaves no partial file.  OUT
# may not be a folder or one of the run's inputs (sentences.tsv, the
# config, its weights, vocabularies and simplify table, $TRANSLATE).
# Exit status: 0 written; 1 translate failed or gave a different number of
# lines; 2 usage error or a missing input.
set -u
TRANSLATE=${TRANSLATE:-./translate}
data=${DATA:-../shared/data}
config=configs/zh-en.yaml
commit=
out=build/data/back-translated.tsv
while [ $# -gt 0 ]; do
    case "$1" in
        --config) [ $# -ge 2 ] || { echo "back_translate.sh: --config needs a file" >&2; exit 2; }
                  config=$2; shift 2 ;;
        --model-commit) [ $# -ge 2 ] || { echo "back_translate.sh: --model-commit needs a revision" >&2; exit 2; }
                  commit=$2; shift 2 ;;
        -h|--help) sed -n '2,32p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "back_translate.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
        *) out=$1; shift ;;
    esac
done
mono=$data/tatoeba-cmn-mono/sentences.tsv
[ -r "$mono" ] || { echo "back_translate.sh: $mono: not readable (set DATA)" >&2; exit 2; }
[ -x "$TRANSLATE" ] || { echo "back_translate.sh: $TRANSLATE: not built (make translate)" >&2; exit 2; }

[ -d "$out" ] && { echo "back_translate.sh: $out is a folder: name the file to write" >&2; exit 2; }

scratch=$(mktemp -d) || exit 1
tmp=
pid=
trap 'rm -rf "$scratch"; [ -z "$tmp" ] || rm -f "$tmp"' EXIT
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; exit 130' INT TERM
if [ -n "$commit" ]; then
    # The committed config names ../weights/...: rebuild that layout.
    mkdir -p "$scratch/model/configs" "$scratch/model/weights"
    for f in configs/zh-en.yaml weights/zh-en.safetensors weights/zh-en.src.vocab weights/zh-en.tgt.vocab; do
        git show "$commit:$f" > "$scratch/model/$f" 2>/dev/null ||
            { echo "back_translate.sh: $commit:$f: not in git" >&2; exit 2; }
    done
    # the Traditional -> Simplified table its config names, in commits that have one
    git show "$commit:weights/zh-simplify.tsv" > "$scratch/model/weights/zh-simplify.tsv" 2>/dev/null ||
        rm -f "$scratch/model/weights/zh-simplify.tsv"
    config=$scratch/model/configs/zh-en.yaml
fi
[ -r "$config" ] || { echo "back_translate.sh: $config: not readable" >&2; exit 2; }
# The files the run reads, which OUT must not replace (the program too:
# OUT=translate made ./translate a TSV): the model's are
# named in the config, relative to its folder.
inputs="$mono
$config
$TRANSLATE"
for key in weights source_vocab target_vocab simplify; do
    # a value plain, or quoted as train_torch.py writes it ("a b.vocab")
    f=$(sed -n -e "s/^ *$key: *\"\([^\"]*\)\".*/\1/p; t" -e "s/^ *$key: *'\([^']*\)'.*/\1/p; t" \
               -e "s/^ *$key: *\([^ #]*\).*/\1/p" "$config" | head -n 1)
    case "$f" in ''|/*) ;; *) f=$(dirname "$config")/$f ;; esac
    inputs="$inputs
$f"
done
printf '%s\n' "$inputs" | while IFS= read -r f; do
    if [ -n "$f" ] && [ "$out" -ef "$f" ]; then
        echo "back_translate.sh: $out would replace $f, an input of this run" >&2
        exit 2
    fi
done || exit 2

mkdir -p "$(dirname "$out")" || exit 1
cut -f1 "$mono" > "$scratch/zh" || exit 1
lines=$(wc -l < "$scratch/zh")
echo "back_translate.sh: translating $lines sentences with $config${commit:+ (from $commit)}..." >&2
start=$(date +%s)
# In the background, so that a signal reaches this script at once and
# the trap above stops translate too.
"$TRANSLATE" -q -c "$config" < "$scratch/zh" > "$scratch/en" &
pid=$!
if ! wait "$pid"; then
    echo "back_translate.sh: $TRANSLATE -c $config failed" >&2
    exit 1
fi
pid=
got=$(wc -l < "$scratch/en")
if [ "$got" -ne "$lines" ]; then
    echo "back_translate.sh: $got translations for $lines sentences" >&2
    exit 1
fi
tmp=$(mktemp "$out.XXXXXX") || exit 1
# mktemp makes the file 0600: give it the mode a new file gets (umask)
mode=$(printf '%o' $(( 0666 & ~0$(umask) )))
if ! paste "$scratch/en" "$scratch/zh" > "$tmp" || ! chmod "$mode" "$tmp" || ! mv "$tmp" "$out"; then
    echo "back_translate.sh: cannot write $out" >&2
    exit 1
fi
tmp=
echo "back_translate.sh: $out: $lines pairs in $(( $(date +%s) - start )) s" >&2
