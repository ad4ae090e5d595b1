#!/usr/bin/env python3
"""Profile a CSV file: shape, ragged rows, and per-column type, fill and values.

Usage: csv-profile.py [--delimiter D] [--top N] [--max-rows N] FILE|-
Standard library only. The delimiter is sniffed when not given.
"""
import argparse
import csv
import io
import re
import sys
from collections import Counter
from datetime import date

INT_RE = re.compile(r"^[+-]?\d+$")
FLOAT_RE = re.compile(r"^[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?$")
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$")
BOOL_VALUES = {"true", "false", "yes", "no", "t", "f", "y", "n"}
NULL_MARKERS = {"", "na", "n/a", "null", "none", "nan", "-"}
DISTINCT_CAP = 100_000


class Column:
    """Running statistics for one column."""

    def __init__(self, name):
        self.name = name
        self.filled = 0
        self.nulls = 0
        self.padded = 0
        self.kinds = Counter()
        self.values = Counter()
        self.capped = False
        self.low = self.high = None
        self.total = 0.0
        self.numeric = 0
        self.min_len = self.max_len = None

    def add(self, raw):
        if raw != raw.strip():
            self.padded += 1
        value = raw.strip()
        if value.lower() in NULL_MARKERS:
            self.nulls += 1
            return
        self.filled += 1
        kind = classify(value)
        self.kinds[kind] += 1
        if kind in ("int", "float"):
            number = float(value)
            self.numeric += 1
            self.total += number
            self.low = number if self.low is None else min(self.low, number)
            self.high = number if self.high is None else max(self.high, number)
        length = len(value)
        self.min_len = length if self.min_len is None else min(self.min_len, length)
        self.max_len = length if self.max_len is None else max(self.max_len, length)
        if value in self.values or len(self.values) < DISTINCT_CAP:
            self.values[value] += 1
        else:
            self.capped = True

    def kind(self):
        if not self.kinds:
            return "empty"
        if set(self.kinds) <= {"int"}:
            return "int"
        if set(self.kinds) <= {"int", "float"}:
            return "float"
        top, count = self.kinds.most_common(1)[0]
        return top if count == self.filled else f"mixed({top} {count}/{self.filled})"


def classify(value):
    if INT_RE.match(value):
        return "int"
    if FLOAT_RE.match(value):
        return "float"
    if DATE_RE.match(value) and valid_date(value[:10]):
        return "date"
    if value.lower() in BOOL_VALUES:
        return "bool"
    return "text"


def valid_date(text):
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def sniff_delimiter(text):
    """Let csv.Sniffer decide; fall back to the most frequent candidate in the header."""
    candidates = ",;\t|"
    try:
        return csv.Sniffer().sniff(text[:65536], delimiters=candidates).delimiter
    except csv.Error:
        first_line = text.split("\n", 1)[0]
        return max(candidates, key=first_line.count)


def fmt_number(x):
    return f"{x:.6g}" if x is not None else "-"


def main():
    parser = argparse.ArgumentParser(description="Profile a CSV file.")
    parser.add_argument("file", help="CSV file, or - for stdin")
    parser.add_argument("--delimiter", "-d", help="field delimiter (sniffed when omitted)")
    parser.add_argument("--top", type=int, default=3, help="most common values to show per column")
    parser.add_argument("--max-rows", type=int, default=0, help="stop after N data rows (0 = all)")
    args = parser.parse_args()

    if args.file == "-":
        text = sys.stdin.read()
    else:
        try:
            with open(args.file, encoding="utf-8-sig", newline="") as handle:
                text = handle.read()
        except (OSError, UnicodeDecodeError) as err:
            print(f"error: {args.file}: {err}", file=sys.stderr)
            return 1
    if not text.strip():
        print("error: input is empty", file=sys.stderr)
        return 1

    delimiter = args.delimiter
    if delimiter is None:
        delimiter = sniff_delimiter(text)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header = next(reader)
    columns = [Column(name.strip() or f"column_{i + 1}") for i, name in enumerate(header)]
    ragged = []
    rows = 0
    for row in reader:
        if not row:
            continue
        rows += 1
        if len(row) != len(header):
            ragged.append((reader.line_num, len(row)))
        for column, value in zip(columns, row):
            column.add(value)
        if args.max_rows and rows >= args.max_rows:
            break

    shown_delim = "\\t" if delimiter == "\t" else delimiter
    print(f"rows: {rows}  columns: {len(columns)}  delimiter: '{shown_delim}'")
    dupes = [n for n, c in Counter(c.name for c in columns).items() if c > 1]
    if dupes:
        print(f"duplicate column names: {', '.join(dupes)}")
    if ragged:
        sample = ", ".join(f"line {ln} has {n}" for ln, n in ragged[:5])
        print(f"ragged rows: {len(ragged)} (header has {len(header)} fields; {sample})")
    print()
    for index, column in enumerate(columns, 1):
        distinct = f"{len(column.values)}{'+' if column.capped else ''}"
        print(f"[{index}] {column.name}: {column.kind()}  filled {column.filled}/{rows}"
              f"  nulls {column.nulls}  distinct {distinct}")
        if column.numeric:
            mean = column.total / column.numeric
            print(f"    min {fmt_number(column.low)}  max {fmt_number(column.high)}  mean {fmt_number(mean)}")
        elif column.filled:
            print(f"    length {column.min_len}..{column.max_len}")
        if column.padded:
            print(f"    {column.padded} values with leading/trailing spaces")
        if column.values and args.top > 0:
            common = ", ".join(f"{v!r} x{n}" for v, n in column.values.most_common(args.top))
            print(f"    top: {common}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:
        # output cut short by a pager or head: not an error worth a traceback
        sys.stdout = None
        sys.exit(141)
