#!/usr/bin/env python3
"""Checks score.py on a tiny case worked out by hand."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import score  # noqa: E402


class GroupingAccuracy(unittest.TestCase):
    def test_hand_checked(self):
        # Truth: lines 1-3 are A, 4-5 are B, 6 is C.
        truth = {1: "A", 2: "A", 3: "A", 4: "B", 5: "B", 6: "C"}
        # Prediction: A exact (3 right); B and C merged into one group (0 right).
        pred = {1: "x", 2: "x", 3: "x", 4: "y", 5: "y", 6: "y"}
        self.assertAlmostEqual(score.grouping_accuracy(truth, pred), 3 / 6)
        # Prediction: A split in two (0 right), B exact (2), C exact (1).
        pred = {1: "x", 2: "x", 3: "w", 4: "y", 5: "y", 6: "z"}
        self.assertAlmostEqual(score.grouping_accuracy(truth, pred), 3 / 6)
        # Group names do not matter, only the partition.
        self.assertAlmostEqual(score.grouping_accuracy(truth, {k: v.lower() for k, v in truth.items()}), 1.0)

    def test_files(self):
        with tempfile.TemporaryDirectory() as d:
            truth = os.path.join(d, "t.csv")
            pred = os.path.join(d, "p.csv")
            with open(truth, "w") as f:
                f.write("LineId,Content,EventId,EventTemplate\n")
                f.write('1,"a 1",E1,a <*>\n2,"a 2",E1,a <*>\n3,"b, c",E2,"b,  c"\n4,d,E3,d\n')
            with open(pred, "w") as f:
                f.write("LineId,EventId,EventTemplate\n")
                f.write('1,E7,a <*>\n2,E7,a <*>\n3,E8,"b, c "\n4,E8,d <*>\n')
            r = score.score(truth, pred)
            # Lines 1-2 grouped right; 3 and 4 merged: GA = 2/4.
            self.assertAlmostEqual(r["GA"], 0.5)
            # Templates right on 1, 2 and 3 (whitespace collapsed, trimmed): PA = 3/4.
            self.assertAlmostEqual(r["PA"], 0.75)
            self.assertEqual(r["pred_templates"], 2)
            self.assertEqual(r["true_templates"], 3)


if __name__ == "__main__":
    unittest.main()
