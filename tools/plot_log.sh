#!/bin/sh
# plot_log.sh — an SVG of a training log (the CSV `train` writes):
# training loss and dev loss against the step (left), dev BLEU and chrF2
# (right).  Plain awk, so plotting needs nothing but POSIX tools.
#
#   sh tools/plot_log.sh docs/training-logs/en-zh.csv "en→zh" > docs/en-zh-training.svg
# A log that cannot be read, or is not a training log (its first line the
# header train writes), is an error (status 2) with no SVG printed.
set -eu
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: plot_log.sh LOG.csv [TITLE] > OUT.svg" >&2; exit 2; }
log=$1
[ -f "$log" ] && [ -r "$log" ] || { echo "plot_log.sh: $log: cannot read it (no such file, or not a readable file)" >&2; exit 2; }
head -n 1 "$log" 2>/dev/null | grep -q '^event,step,' ||
    { echo "plot_log.sh: $log: not a training log (train's CSV)" >&2; exit 2; }
title=${2:-$log}
awk -F, -v title="$title" '
# text for the SVG: & and < would make it no XML (the title defaults to the path)
function esc(s) { gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); gsub(/>/, "\\&gt;", s); return s }
NR == 1 { next }
# a number on the axis, or "nan" (not drawn): "inf" or a hand-edited 1e999
# drew "-nan" coordinates and an "inf" axis
function finite(v) { return v ~ /^[0-9.]+([eE][-+]?[0-9]+)?$/ && v + 0 < 1e300 ? v : "nan" }
$1 == "step" && finite($4) != "nan" { n++; sx[n] = $2; sy[n] = $4; if ($2 > maxstep) maxstep = $2 }
$1 == "eval" { e++; ex[e] = $2; el[e] = finite($8); eb[e] = finite($9); ec[e] = finite($10)
               if ($2 > maxstep) maxstep = $2 }
function px(step, x0, w) { return x0 + w * step / (maxstep > 0 ? maxstep : 1) }
function py(v, lo, hi, y0, h) { return y0 + h - h * (v - lo) / (hi - lo) }
function axes(x0, y0, w, h, lo, hi, ticks, label,    i, v, y) {
    printf "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>\n", x0, y0, w, h
    for (i = 0; i <= ticks; i++) {
        v = lo + (hi - lo) * i / ticks; y = py(v, lo, hi, y0, h)
        printf "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>", x0, x0 + w, y, y
        printf "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" font-size=\"11\">%g</text>\n", x0 - 4, y + 4, v
    }
    for (i = 0; i <= 4; i++)
        printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" font-size=\"11\">%d</text>\n", x0 + w * i / 4, y0 + h + 15, maxstep * i / 4
    printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"12\">step</text>\n", x0 + w / 2, y0 + h + 32
    printf "<text x=\"%d\" y=\"%d\" font-size=\"13\" font-weight=\"bold\">%s</text>\n", x0, y0 - 8, label
}
function polyline(xs, ys, count, lo, hi, x0, y0, w, h, color,    i, pts) {
    pts = ""
    for (i = 1; i <= count; i++) if (ys[i] != "nan") pts = pts sprintf("%.1f,%.1f ", px(xs[i], x0, w), py(ys[i], lo, hi, y0, h))
    printf "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\" points=\"%s\"/>\n", color, pts
}
END {
    lmax = 0; for (i = 1; i <= n; i++) if (sy[i] > lmax) lmax = sy[i]
    lmax = int(lmax + 1); bmax = 10; for (i = 1; i <= e; i++) { if (eb[i] + 0 > bmax) bmax = eb[i]; if (ec[i] + 0 > bmax) bmax = ec[i] }
    bmax = int(bmax / 10 + 1) * 10
    print "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"900\" height=\"340\" font-family=\"sans-serif\">"
    print "<rect width=\"900\" height=\"340\" fill=\"white\"/>"
    printf "<text x=\"450\" y=\"20\" text-anchor=\"middle\" font-size=\"15\">%s</text>\n", esc(title)
    axes(60, 50, 360, 230, 0, lmax, lmax > 10 ? 5 : lmax, "loss")
    polyline(sx, sy, n, 0, lmax, 60, 50, 360, 230, "#1f77b4")
    polyline(ex, el, e, 0, lmax, 60, 50, 360, 230, "#d62728")
    print "<text x=\"300\" y=\"70\" font-size=\"11\" fill=\"#1f77b4\">training (dropout on)</text>"
    print "<text x=\"300\" y=\"86\" font-size=\"11\" fill=\"#d62728\">dev (no dropout)</text>"
    axes(510, 50, 360, 230, 0, bmax, 5, "dev score (greedy)")
    polyline(ex, eb, e, 0, bmax, 510, 50, 360, 230, "#2ca02c")
    polyline(ex, ec, e, 0, bmax, 510, 50, 360, 230, "#9467bd")
    print "<text x=\"520\" y=\"70\" font-size=\"11\" fill=\"#2ca02c\">BLEU</text>"
    print "<text x=\"520\" y=\"86\" font-size=\"11\" fill=\"#9467bd\">chrF2</text>"
    print "</svg>"
}' "$log"
