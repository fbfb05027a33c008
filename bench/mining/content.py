#!/usr/bin/env python3
"""content.py STRUCTURED.csv: prints the Content column, one message a line
(the input the loghub benchmark gives a template miner)."""
import csv
import sys

with open(sys.argv[1], newline="", encoding="utf-8", errors="replace") as f:
    out = sys.stdout
    for row in csv.DictReader(f):
        out.write(row["Content"].replace("\r", " ").replace("\n", " ") + "\n")
