#!/usr/bin/env python3
"""How faithfully translations keep the source's numbers.

    python3 tools/number_fidelity.py DEV.tsv SOURCE_COLUMN HYPS [HYPS ...]

DEV.tsv is a dev set (English first, Chinese second), SOURCE_COLUMN the
column that was translated (0 for en-zh, 1 for zh-en), each HYPS one
translation a line, as `translate --eval DEV --hyps FILE` writes them.
Among the sources that hold a number (a run of digits, full-width ones
counted as ASCII, as NFKC makes them), it counts the translations that
write every one of them (as often as the source has it) and those that
write a number the source does not have.  It is what docs/models.md's
copy_numbers figures came from; it reads text only, no model.
"""
import collections
import re
import sys

FULL_WIDTH = str.maketrans("０１２３４５６７８９", "0123456789")


def numbers(text):
    return collections.Counter(re.findall(r"[0-9]+", text.translate(FULL_WIDTH)))


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    dev, column = argv[1], argv[2]
    if column not in ("0", "1"):
        sys.exit(f"number_fidelity.py: COLUMN is 0 or 1, not {column!r}")
    column = int(column)
    try:
        with open(dev, encoding="utf-8") as f:
            rows = [line.rstrip("\n").split("\t") for line in f if line.strip()]
        if any(len(row) <= column for row in rows):
            sys.exit(f"number_fidelity.py: {dev}: a line without column {column}")
        sources = [row[column] for row in rows]
        for path in argv[3:]:
            with open(path, encoding="utf-8") as f:
                text = f.read()
            # one translation a line; the end of the last line is no line more
            # (a file one line short passed, the empty string standing in)
            hyps = text[:-1].split("\n") if text.endswith("\n") else text.split("\n") if text else []
            if len(hyps) != len(sources):
                sys.exit(f"number_fidelity.py: {path}: {len(hyps)} lines for {len(sources)} sources")
            report(path, sources, hyps)
    except (OSError, UnicodeDecodeError) as e:
        sys.exit(f"number_fidelity.py: {e}")


def report(path, sources, hyps):
    with_numbers = copied = invented = 0
    for source, hyp in zip(sources, hyps):
        want, got = numbers(source), numbers(hyp)
        if not want:
            continue
        with_numbers += 1
        copied += not (want - got)
        invented += bool(got - want)
    print(f"{path}: {with_numbers} sources with numbers; all of them written in {copied}, "
          f"a number the source lacks in {invented}")


if __name__ == "__main__":
    main(sys.argv)
