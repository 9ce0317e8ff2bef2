#!/usr/bin/env python3
"""How faithfully translations keep the source's numbers.

    python3 tools/number_fidelity.py DEV.tsv SOURCE_COLUMN HYPS [HYPS ...]

DEV.tsv is a dev set (English first, Chinese second), SOURCE_COLUMN the
column that was translated (0 for en-zh, 1 for zh-en), each HYPS one
translation a line, as `translate --eval DEV --hyps FILE` writes them.
Among the sources that hold a number (a run of digits, full-width ones
counted as ASCII, as NFKC makes them, with its thousands commas: 100,000
is 100000; with its decimal point too when a scale word follows it, and
then the scaled value: 2.84 million 2840000, 10万 100000, 3万4300 34300),
it counts the translations that write every one of them (as often as the
source has it) and those that write a number the source does not have.  It is what docs/models.md's
copy_numbers figures came from; it reads text only, no model.

It also counts them a second way, "with numerals and words", on both
sides: a number is a run of digits with its thousands commas and decimal
point (2,500 is 2500, 36.5 is 36.5), a run of Chinese numerals, digits
among them, counts as the number it reads (三十六点五 36.5, 二千五百 2500,
一亿二千万 120000000, 10万 100000, 一九九零 1990, 两 as 2), a run of
English number words as the number it says (twenty-five 25, two hundred
and five 205), and digits followed by thousand, million or billion as the
scaled value (2.84 million 2840000, not 2.84 and a million).  Each way, a
千 right after digits that begins a unit (5千克 five kilograms, 10千米,
5千瓦) scales nothing.  A lone 一 .. 九 or "one" may be a word (一起, the red
one): it counts towards "written", never as a number to write or an
invented one; so does a 点 that no digit follows (七点 o'clock).
"""
import collections
import decimal
import re
import sys

FULL_WIDTH = str.maketrans("０１２３４５６７８９", "0123456789")
HAN_DIGITS = {c: d for d, c in enumerate("零一二三四五六七八九")} | {"两": 2, "〇": 0}
HAN_MAGNITUDES = {"十": 10, "百": 100, "千": 1000, "万": 10 ** 4, "亿": 10 ** 8}
DIGIT_GROUP = r"[0-9]+(?:,[0-9]{3})*(?:\.[0-9]+)?"
# Scale words after digits: 2.84 million, 10万, 3万4300 (one number), 5千;
# not the 千 of a unit (5千克 is five kilograms, 10千米 ten kilometres).
ENGLISH_SCALES = {"thousand": 10 ** 3, "million": 10 ** 6, "billion": 10 ** 9}
ENGLISH_SCALED = re.compile(rf"\b({DIGIT_GROUP})[ \t\u00a0]*(thousand|million|billion)\b", re.IGNORECASE)
HAN_SCALE = "(?:[百万亿]|千(?![克米瓦]))"
HAN_SCALED = re.compile(f"{DIGIT_GROUP}(?:{HAN_SCALE}(?:{DIGIT_GROUP}(?={HAN_SCALE}))?)+(?:{DIGIT_GROUP})?")


def english_scaled(match):
    """The value of digits and the scale word after them, as digits."""
    number = decimal.Decimal(match.group(1).replace(",", ""))
    return as_text(number * ENGLISH_SCALES[match.group(2).lower()])


def numbers(text):
    """The numbers of `text` read "digits only": each run of digits (its
    thousands commas dropped), or digits with the scale word after them as
    the scaled value."""
    text = re.sub(r"(?<=[0-9])，(?=[0-9])", ",", text.translate(FULL_WIDTH))
    found = [english_scaled(m) for m in ENGLISH_SCALED.finditer(text)]
    text = ENGLISH_SCALED.sub(" ", text)
    found += [han_value(m.group()) for m in HAN_SCALED.finditer(text)]
    text = HAN_SCALED.sub(" ", text)
    found += [run.replace(",", "") for run in re.findall(r"[0-9]+(?:,[0-9]{3})*", text)]
    return collections.Counter(found)


HAN_RUN = re.compile(f"(?:{DIGIT_GROUP}|[零〇一二两三四五六七八九十百万亿]|(?<![0-9])千|{HAN_SCALE}"
                     f"|点(?=[零〇一二两三四五六七八九0-9]))+")
ENGLISH = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen " \
          "sixteen seventeen eighteen nineteen".split()
ENGLISH_VALUES = {w: i for i, w in enumerate(ENGLISH)} | \
    {w: 10 * i for i, w in enumerate("_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()) if i >= 2} | \
    {"hundred": 100, "thousand": 10 ** 3, "million": 10 ** 6, "billion": 10 ** 9,
     "hundreds": 100, "thousands": 10 ** 3, "millions": 10 ** 6, "billions": 10 ** 9}
ENGLISH_WORD = "(?:" + "|".join(sorted(ENGLISH_VALUES, key=len, reverse=True)) + ")"
ENGLISH_RUN = re.compile(rf"\b{ENGLISH_WORD}(?:(?:-|\s+and\s+|\s+){ENGLISH_WORD})*\b")


def as_text(value):
    """A Decimal as digits, no exponent, no trailing zeros after a point."""
    text = format(value.normalize(), "f")
    return text


def han_value(run):
    """The value of a run of Chinese numerals and digit groups, as digits,
    or None where it reads as no number."""
    whole, point, decimals = run.partition("点")
    scale = 1
    if point and decimals[-1:] in ("万", "亿"):  # 五点五万: 5.5 times 10^4
        scale, decimals = HAN_MAGNITUDES[decimals[-1]], decimals[:-1]
    if point:
        digits = [str(HAN_DIGITS[c]) if c in HAN_DIGITS else c for c in decimals]
        if not decimals or not all(d.isdigit() and len(d) == 1 for d in digits):
            return None  # 五点五万, 一点一点: not a plain decimal
    items = re.findall(f"{DIGIT_GROUP}|.", whole)
    if not items:
        return None
    units = any(i in HAN_MAGNITUDES for i in items)
    if not units:  # 一九九零, 1990: digits one after another
        text = "".join(str(HAN_DIGITS[i]) if i in HAN_DIGITS else i.replace(",", "") for i in items)
        if text.count(".") > 1:
            return None
        value = decimal.Decimal(text)
    else:
        total = myriads = section = decimal.Decimal(0)
        pending = None
        for i in items:
            if i in HAN_DIGITS:
                pending = decimal.Decimal(HAN_DIGITS[i])
            elif i not in HAN_MAGNITUDES:  # a digit group: 10万, 2.84万
                pending = decimal.Decimal(i.replace(",", ""))
            elif HAN_MAGNITUDES[i] < 10 ** 4:
                section += (pending if pending is not None else 1) * HAN_MAGNITUDES[i]
                pending = None
            elif i == "万":
                myriads += ((section + (pending or 0)) or 1) * 10 ** 4
                section, pending = decimal.Decimal(0), None
            else:  # 亿: everything so far
                total = ((total + myriads + section + (pending or 0)) or 1) * 10 ** 8
                myriads = section = decimal.Decimal(0)
                pending = None
        value = total + myriads + section + (pending or 0)
    if point:
        value += decimal.Decimal("0." + "".join(digits))
    return as_text(value * scale)


def english_value(run):
    """The value of a run of English number words, as digits."""
    total = current = 0
    for word in re.findall(ENGLISH_WORD, run):
        v = ENGLISH_VALUES[word]
        if v < 100:
            current += v
        elif v == 100:
            current = (current or 1) * 100
        else:
            total += (current or 1) * v
            current = 0
    return str(total + current)


def whole_numbers(text):
    """The numbers of `text` read "with numerals and words": (Counter of
    all, Counter of those that are surely numbers)."""
    text = re.sub(r"(?<=[0-9])，(?=[0-9])", ",", text.translate(FULL_WIDTH))
    found = [english_scaled(m) for m in ENGLISH_SCALED.finditer(text)]
    sure = list(found)
    text = ENGLISH_SCALED.sub(" ", text)
    for m in HAN_RUN.finditer(text):
        run = m.group()
        try:
            value = han_value(run)
        except (decimal.Overflow, decimal.InvalidOperation):  # 亿亿亿…: no number anyone wrote
            value = None
        if value is None:
            continue
        found.append(value)
        lone_word = len(run) == 1 and run in "一二两三四五六七八九"
        if not lone_word:
            sure.append(value)
    for m in ENGLISH_RUN.finditer(text.lower()):
        value = english_value(m.group())
        found.append(value)
        if m.group() != "one":
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
        rows = [line.split("\t") for line in read_text(dev).split("\n") if line.strip()]
        if any(len(row) <= column for row in rows):
            sys.exit(f"number_fidelity.py: {dev}: a line without column {column}")
        sources = [row[column] for row in rows]
        for path in argv[3:]:
            text = read_text(path)
            # one translation a line; the end of the last line is no line more
            # (a file one line short passed, the empty string standing in)
            hyps = text[:-1].split("\n") if text.endswith("\n") else text.split("\n") if text else []
            if len(hyps) != len(sources):
                sys.exit(f"number_fidelity.py: {path}: {len(hyps)} lines for {len(sources)} sources")
            report(path, sources, hyps)
    except OSError as e:
        sys.exit(f"number_fidelity.py: {e}")


def read_text(path):
    """The file's text, its line ends made "\\n" as open() in text mode
    makes them; bytes that are no UTF-8 end the run with the file and line
    named (the codec's own message named neither)."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        sys.exit(f"number_fidelity.py: {path}: line {line}: not UTF-8 (byte 0x{data[e.start]:02x})")


def report(path, sources, hyps):
    with_numbers = copied = invented = 0
    with_any = copied_any = invented_any = 0
    for source, hyp in zip(sources, hyps):
        want, got = numbers(source), numbers(hyp)
        if want:
            with_numbers += 1
            copied += not (want - got)
            invented += bool(got - want)
        source_all, source_sure = whole_numbers(source)
        if not source_sure:
            continue
        hyp_all, hyp_sure = whole_numbers(hyp)
        with_any += 1
        copied_any += not (source_sure - hyp_all)
        invented_any += bool(hyp_sure - source_all)
    print(f"{path}: {with_numbers} sources with numbers; all of them written in {copied}, "
          f"a number the source lacks in {invented}; with numerals and words: {with_any} sources with numbers, "
          f"all written in {copied_any}, one the source lacks in {invented_any}")


if __name__ == "__main__":
    main(sys.argv)
