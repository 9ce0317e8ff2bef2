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

For Chinese translations (column 0) it also counts them a second way,
"with numerals": a number is a run of digits with its thousands commas
and decimal point (2,500 is 2500, 36.5 is 36.5), and a run of Chinese
numerals counts as the number it reads (三十六点五 36.5, 二千五百 2500,
一九九零 1990, 两 as 2, 〇 as 0), so 五 for 5 is written and 五号 for
512 is not.  A lone 一 .. 九 may be a word (一起, 三个 for "three"): it
counts towards "written", never as invented; a run of two numerals or a
十 百 千 万 亿 does both, as copy_numbers checks them (model/number_rule.h).
"""
import collections
import re
import sys

FULL_WIDTH = str.maketrans("０１２３４５６７８９", "0123456789")


def numbers(text):
    return collections.Counter(re.findall(r"[0-9]+", text.translate(FULL_WIDTH)))


HAN_DIGITS = {c: d for d, c in enumerate("零一二三四五六七八九")} | {"两": 2, "〇": 0}
HAN_UNITS = {"十": 10, "百": 100, "千": 1000}
HAN_SECTIONS = {"万": 10 ** 4, "亿": 10 ** 8}
NUMERAL = "[零〇一二两三四五六七八九十百千万亿]"
NUMERAL_RUN = re.compile(f"{NUMERAL}(?:{NUMERAL}|点(?=[零〇一二两三四五六七八九]))*")


def integer_reading(run):
    """The value of 三十六, 二千五百, 一万零五, 一九九零 (digits one by one)."""
    if not any(c in HAN_UNITS or c in HAN_SECTIONS for c in run):
        return "".join(str(HAN_DIGITS[c]) for c in run)
    total = section = digit = 0
    for c in run:
        if c in HAN_DIGITS:
            digit = HAN_DIGITS[c]
        elif c in HAN_UNITS:
            section += (digit or 1) * HAN_UNITS[c]
            digit = 0
        else:  # 万 亿: everything so far times it
            total = (total + section + digit) * HAN_SECTIONS[c]
            section = digit = 0
    return str(total + section + digit)


def whole_numbers(text, numerals):
    """Numbers as written, commas dropped (2,500 -> 2500, 36.5), and, with
    `numerals`, the Chinese runs read: (Counter of all, Counter of those
    that are surely numbers)."""
    text = text.translate(FULL_WIDTH)
    found = [n.replace(",", "") for n in re.findall(r"[0-9]+(?:[.,][0-9]+)*", text)]
    sure = list(found)
    for run in NUMERAL_RUN.findall(text) if numerals else []:
        whole, _, decimals = run.partition("点")
        value = integer_reading(whole) + ("." + "".join(str(HAN_DIGITS[c]) for c in decimals) if decimals else "")
        found.append(value)
        if len(run) > 1 or run in HAN_UNITS or run in HAN_SECTIONS:
            sure.append(value)
    return collections.Counter(found), collections.Counter(sure)


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
            report(path, sources, hyps, chinese=column == 0)
    except (OSError, UnicodeDecodeError) as e:
        sys.exit(f"number_fidelity.py: {e}")


def report(path, sources, hyps, chinese):
    with_numbers = copied = invented = 0
    copied_whole = invented_whole = 0
    for source, hyp in zip(sources, hyps):
        want, got = numbers(source), numbers(hyp)
        if not want:
            continue
        with_numbers += 1
        copied += not (want - got)
        invented += bool(got - want)
        want_whole, _ = whole_numbers(source, False)
        got_whole, got_sure = whole_numbers(hyp, True)
        copied_whole += not (want_whole - got_whole)
        invented_whole += bool(got_sure - want_whole)
    print(f"{path}: {with_numbers} sources with numbers; all of them written in {copied}, "
          f"a number the source lacks in {invented}"
          + (f"; with numerals: all written in {copied_whole}, one the source lacks in {invented_whole}"
             if chinese else ""))


if __name__ == "__main__":
    main(sys.argv)
