#!/bin/sh
# plot_compare.sh — training loss of several runs in one SVG, for
# experiments that change one setting (docs/attention-questions.md).
#
#   sh tools/plot_compare.sh "TITLE" LABEL1 LOG1.csv LABEL2 LOG2.csv ... > OUT.svg
# A log that cannot be read, or is not a training log (its first line the
# header train writes), is an error (status 2) with no SVG printed.
set -eu
usage='usage: plot_compare.sh "TITLE" LABEL1 LOG1.csv [LABEL2 LOG2.csv ...] > OUT.svg'
[ $# -ge 3 ] && [ $(( ($# - 1) % 2 )) -eq 0 ] || { echo "$usage" >&2; exit 2; }
title=$1; shift
# The logs become the arguments, the labels a list: a log's path may hold
# spaces (a string of paths was split at them).
# The labels are joined by a character no label holds (a "|" split one).
sep=$(printf '\034')
n=$# i=0 labels=""
for a do
    i=$((i + 1))
    if [ $((i % 2)) -eq 1 ]; then labels="$labels$sep$a"; continue; fi
    [ -f "$a" ] && [ -r "$a" ] || { echo "plot_compare.sh: $a: cannot read it (no such file, or not a readable file)" >&2; exit 2; }
    head -n 1 "$a" 2>/dev/null | grep -q '^event,step,' ||
        { echo "plot_compare.sh: $a: not a training log (train's CSV)" >&2; exit 2; }
    set -- "$@" "$a"
done
shift "$n"
awk -F, -v title="$title" -v labels="$labels" -v sep="$sep" '
# text for the SVG: & and < would make it no XML
function esc(s) { gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); gsub(/>/, "\\&gt;", s); return s }
FNR == 1 { run++; next }
# a finite loss only: "nan", "inf" or a hand-edited 1e999 has no place on the axis
$1 == "step" && $4 ~ /^[0-9.]+([eE][-+]?[0-9]+)?$/ && $4 + 0 < 1e300 {
    n[run]++; x[run, n[run]] = $2; y[run, n[run]] = $4
    if ($2 > maxx) maxx = $2; if ($4 > maxy) maxy = $4 }
END {
    split(labels, name, sep)
    ncolor = split("#1f77b4 #d62728 #2ca02c #9467bd #ff7f0e #8c564b #e377c2 #17becf", color, " ")
    maxy = int(maxy + 1); W = 600; H = 300; X0 = 60; Y0 = 40
    if (maxx <= 0) maxx = 1 # a log of step 0 alone: x / 0 drew "-nan"
    # at most ~10 gridlines: one per unit of loss drew 10^9 lines for a
    # loss of 10^9, and never stopped for "inf"
    ystep = 1; while (maxy / ystep > 10) ystep *= 2
    print "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"700\" height=\"390\" font-family=\"sans-serif\">"
    print "<rect width=\"700\" height=\"390\" fill=\"white\"/>"
    printf "<text x=\"350\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">%s</text>\n", esc(title)
    printf "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>\n", X0, Y0, W, H
    for (i = 0; i <= maxy; i += ystep) {
        yy = Y0 + H - H * i / maxy
        printf "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/><text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" font-size=\"11\">%d</text>\n", X0, X0 + W, yy, yy, X0 - 4, yy + 4, i
    }
    for (i = 0; i <= 4; i++) printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" font-size=\"11\">%d</text>\n", X0 + W * i / 4, Y0 + H + 15, maxx * i / 4
    printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"12\">step</text>\n", X0 + W / 2, Y0 + H + 32
    printf "<text x=\"%d\" y=\"%d\" font-size=\"12\">training loss (label-smoothed)</text>\n", X0, Y0 - 6
    for (r = 1; r <= run; r++) {
        pts = ""
        for (i = 1; i <= n[r]; i++) pts = pts sprintf("%.1f,%.1f ", X0 + W * x[r, i] / maxx, Y0 + H - H * y[r, i] / maxy)
        c = color[(r - 1) % ncolor + 1] # (a fifth run had none, and was not drawn)
        printf "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\" points=\"%s\"/>\n", c, pts
        printf "<text x=\"%d\" y=\"%d\" font-size=\"12\" fill=\"%s\">%s</text>\n", X0 + W - 230, Y0 + 20 + 16 * r, c, esc(name[r + 1])
    }
    print "</svg>"
}' "$@"
