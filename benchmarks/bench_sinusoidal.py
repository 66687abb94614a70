"""How fast and how accurate is pe_lib.sinusoidal_encoding?

Prints, for an 8192 x 1024 float32 table:
- the best-of-N time of ``sinusoidal_encoding``;
- the floor: one float32 ``np.sin`` pass over an array of the same size
  (no table can be filled faster than its entries can be computed once);
- their ratio, against the target of 1.5x;
- the largest error against a float64 reference at positions up to 10**6,
  against the target of 1e-6.

Run it with ``python3 tasks.py bench``.
"""

from __future__ import annotations

import argparse
import timeit

import numpy as np

from pe_lib import sinusoidal_encoding
from pe_lib.course.lessons.precision import column_errors

TARGET_RATIO = 1.5
TARGET_ERROR = 1e-6


def best_time(function, repeats: int) -> float:
    """The fastest of ``repeats`` calls, in seconds."""
    return min(timeit.repeat(function, number=1, repeat=repeats))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=8192)
    parser.add_argument("--depth", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    length, depth = args.length, args.depth

    same_size = np.random.default_rng(0).uniform(0, 1000, size=(length, depth)).astype(np.float32)
    floor = best_time(lambda: np.sin(same_size), args.repeats)
    encoding = best_time(lambda: sinusoidal_encoding(length, depth), args.repeats)

    last_position = 10**6
    start = last_position - length + 1
    table = sinusoidal_encoding(length, depth, start=start)
    error = float(column_errors(table, start=start).max())

    ratio = encoding / floor
    print(f"sinusoidal_encoding({length}, {depth}), float32, best of {args.repeats}")
    print(f"  encoding              {encoding * 1e3:8.2f} ms")
    print(f"  floor (float32 sin)   {floor * 1e3:8.2f} ms")
    print(f"  ratio                 {ratio:8.2f} x   (target <= {TARGET_RATIO:g} x: "
          f"{'met' if ratio <= TARGET_RATIO else 'NOT met'})")
    print(f"  max error, positions {start}..{last_position} vs float64: {error:.3g}   "
          f"(target <= {TARGET_ERROR:g}: {'met' if error <= TARGET_ERROR else 'NOT met'})")


if __name__ == "__main__":
    main()
