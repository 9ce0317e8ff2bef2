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
    dev, column = argv[1], int(argv[2])
    with open(dev, encoding="utf-8") as f:
        sources = [line.rstrip("\n").split("\t")[column] for line in f if line.strip()]
    for path in argv[3:]:
        with open(path, encoding="utf-8") as f:
            hyps = f.read().split("\n")[: len(sources)]
        if len(hyps) != len(sources):
            sys.exit(f"{path}: {len(hyps)} lines for {len(sources)} sources")
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
