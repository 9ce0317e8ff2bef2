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
args=""
while [ $# -ge 2 ]; do
    head -n 1 "$2" 2>/dev/null | grep -q '^event,step,' ||
        { echo "plot_compare.sh: $2: not a training log (train's CSV)" >&2; exit 2; }
    args="$args $2"; labels="${labels:-}|$1"; shift 2
done
awk -F, -v title="$title" -v labels="$labels" '
FNR == 1 { run++; next }
$1 == "step" && $4 != "nan" { n[run]++; x[run, n[run]] = $2; y[run, n[run]] = $4
                              if ($2 > maxx) maxx = $2; if ($4 > maxy) maxy = $4 }
END {
    split(labels, name, "|")
    split("#1f77b4 #d62728 #2ca02c #9467bd", color, " ")
    maxy = int(maxy + 1); W = 600; H = 300; X0 = 60; Y0 = 40
    print "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"700\" height=\"390\" font-family=\"sans-serif\">"
    print "<rect width=\"700\" height=\"390\" fill=\"white\"/>"
    printf "<text x=\"350\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">%s</text>\n", title
    printf "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>\n", X0, Y0, W, H
    for (i = 0; i <= maxy; i++) {
        yy = Y0 + H - H * i / maxy
        printf "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/><text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" font-size=\"11\">%d</text>\n", X0, X0 + W, yy, yy, X0 - 4, yy + 4, i
    }
    for (i = 0; i <= 4; i++) printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" font-size=\"11\">%d</text>\n", X0 + W * i / 4, Y0 + H + 15, maxx * i / 4
    printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"12\">step</text>\n", X0 + W / 2, Y0 + H + 32
    printf "<text x=\"%d\" y=\"%d\" font-size=\"12\">training loss (label-smoothed)</text>\n", X0, Y0 - 6
    for (r = 1; r <= run; r++) {
        pts = ""
        for (i = 1; i <= n[r]; i++) pts = pts sprintf("%.1f,%.1f ", X0 + W * x[r, i] / maxx, Y0 + H - H * y[r, i] / maxy)
        printf "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\" points=\"%s\"/>\n", color[r], pts
        printf "<text x=\"%d\" y=\"%d\" font-size=\"12\" fill=\"%s\">%s</text>\n", X0 + W - 230, Y0 + 20 + 16 * r, color[r], name[r + 1]
    }
    print "</svg>"
}' $args
