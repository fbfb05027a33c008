#!/usr/bin/env python3
"""Scores log-template predictions against loghub-2k ground truth.

GA (grouping accuracy): a line is correct when the set of lines its predicted
group holds is exactly the set of lines of its ground-truth group. Ground-truth
groups are keyed by EventTemplate (whitespace-normalized), predicted groups by
EventId (or EventTemplate if the prediction has no EventId).
PA (parsing accuracy): a line is correct when its predicted template equals
the ground-truth template after collapsing whitespace runs and trimming.

  score.py pair TRUTH.csv PRED.csv
  score.py batch DATA_DIR PRED_DIR [--labels original|corrected] [--json]

In batch mode DATA_DIR/<S>/<S>_2k.log_structured[_corrected].csv is scored
against PRED_DIR/<S>.csv for every data set <S> present in PRED_DIR.
Standard library only.
"""
import csv
import json
import os
import re
import sys
from collections import Counter, defaultdict

_SPACE = re.compile(r"\s+")


def normalize(template):
    return _SPACE.sub(" ", template).strip()


def read_rows(path):
    with open(path, newline="", encoding="utf-8", errors="replace") as f:
        return list(csv.DictReader(f))


def labels_by_line(rows, key):
    """LineId (int) -> label, for column `key` (EventTemplate normalized)."""
    out = {}
    for row in rows:
        value = row[key]
        out[int(row["LineId"])] = normalize(value) if key == "EventTemplate" else value
    return out


def grouping_accuracy(truth, pred):
    """truth, pred: dict LineId -> group label. Returns the share of lines
    whose predicted group equals their true group exactly."""
    if not truth:
        return 0.0
    true_sizes = Counter(truth.values())
    members = defaultdict(list)
    for line, group in pred.items():
        members[group].append(line)
    correct = 0
    for lines in members.values():
        true_groups = {truth.get(line) for line in lines}
        if len(true_groups) != 1:
            continue
        (true_group,) = true_groups
        if true_group is not None and true_sizes[true_group] == len(lines):
            correct += len(lines)
    return correct / len(truth)


def parsing_accuracy(truth_templates, pred_templates):
    if not truth_templates:
        return 0.0
    correct = sum(
        1 for line, t in truth_templates.items() if pred_templates.get(line) == t
    )
    return correct / len(truth_templates)


def score(truth_path, pred_path):
    truth_rows = read_rows(truth_path)
    pred_rows = read_rows(pred_path)
    truth_templates = labels_by_line(truth_rows, "EventTemplate")
    pred_templates = labels_by_line(pred_rows, "EventTemplate")
    group_key = "EventId" if pred_rows and "EventId" in pred_rows[0] else "EventTemplate"
    pred_groups = labels_by_line(pred_rows, group_key)
    missing = len(set(truth_templates) - set(pred_groups))
    return {
        "GA": grouping_accuracy(truth_templates, pred_groups),
        "PA": parsing_accuracy(truth_templates, pred_templates),
        "lines": len(truth_templates),
        "missing_lines": missing,
        "true_templates": len(set(truth_templates.values())),
        "pred_templates": len(set(pred_groups.values())),
    }


def batch(data_dir, pred_dir, labels):
    suffix = "_structured_corrected.csv" if labels == "corrected" else "_structured.csv"
    results = {}
    for name in sorted(os.listdir(data_dir)):
        truth = os.path.join(data_dir, name, f"{name}_2k.log{suffix}")
        pred = os.path.join(pred_dir, f"{name}.csv")
        if os.path.isfile(truth) and os.path.isfile(pred):
            results[name] = score(truth, pred)
    return results


def main(argv):
    if len(argv) >= 3 and argv[0] == "pair":
        r = score(argv[1], argv[2])
        print(f"GA={r['GA']:.4f} PA={r['PA']:.4f} templates={r['pred_templates']}/{r['true_templates']}")
        return 0
    if len(argv) >= 3 and argv[0] == "batch":
        labels = "original"
        if "--labels" in argv:
            labels = argv[argv.index("--labels") + 1]
        if labels not in ("original", "corrected"):
            print("--labels must be original or corrected", file=sys.stderr)
            return 2
        results = batch(argv[1], argv[2], labels)
        if not results:
            print("no data sets scored", file=sys.stderr)
            return 2
        ga = sum(r["GA"] for r in results.values()) / len(results)
        pa = sum(r["PA"] for r in results.values()) / len(results)
        if "--json" in argv:
            print(json.dumps({"labels": labels, "datasets": results, "average": {"GA": ga, "PA": pa}}, indent=2))
            return 0
        print(f"labels: {labels}")
        print(f"{'dataset':<12} {'GA':>6} {'PA':>6} {'templates':>11}")
        for name, r in results.items():
            print(f"{name:<12} {r['GA']:6.4f} {r['PA']:6.4f} {r['pred_templates']:>5}/{r['true_templates']:<5}")
        print(f"{'average':<12} {ga:6.4f} {pa:6.4f}")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
