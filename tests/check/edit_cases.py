"""Notebooks with one hand-written mistake each, for tests/check/edits.test.mjs: the plain NumPy
notebook of tests/bench/check_mutants.py (REFERENCE) with one line replaced by the test's own
text, run at the test's size and saved as a student would (np.savez), some results left out.

    python3 edit_cases.py OUT_DIR < cases.json
    cases: [{ "name", "find", "replace" (each a text or a list of them), "sizes": { B, T, C,
              heads, causal, seed }, "drop",
              "rename": { course name: the student's key } }]
"""

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import check_mutants  # noqa: E402  (the notebook and how it is run)


def main():
    out = sys.argv[1]
    for case in json.load(sys.stdin):
        source = check_mutants.REFERENCE
        finds, replaces = case["find"], case["replace"]
        if isinstance(finds, str):  # one replacement, or a list of them
            finds, replaces = [finds], [replaces]
        for find, replace in zip(finds, replaces):
            if not find:
                continue
            if source.count(find) != 1:
                raise SystemExit(f"{case['name']}: the line to replace is not found once")
            source = source.replace(find, replace)
        arrays = check_mutants.run(source, case["sizes"])
        for name in case.get("drop", []):
            arrays.pop(name, None)
        for name, key in case.get("rename", {}).items():  # saved under the student's own names
            arrays[key] = arrays.pop(name)
        np.savez(os.path.join(out, case["name"] + ".npz"), **arrays)


if __name__ == "__main__":
    main()
