"""How much faster is RoPE's elementwise form than its matrix form?

For each depth d, rotates a float32 batch of (batch, length, d) queries with
- the efficient form x * cos + rotate_half(x) * sin (2d multiplications per vector),
- the matrix form, one d x d block-rotation matrix per position (d * d multiplications),
with the tables of both computed beforehand, and prints the best-of-N times
and their ratio against the target of 5x at d = 256.

Run it with ``python3 tasks.py bench rope``.
"""

from __future__ import annotations

import argparse
import timeit

import numpy as np

from pe_lib.course.lessons.rope_forms import cos_sin_tables, rope_efficient, rope_matrix, rotation_matrices

TARGET_RATIO_AT_256 = 5.0


def best_time(function, repeats: int) -> float:
    """The fastest of ``repeats`` calls, in seconds."""
    return min(timeit.repeat(function, number=1, repeat=repeats))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--depths", type=int, nargs="+", default=[64, 128, 256, 512])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    print(f"RoPE on {args.batch} x {args.length} float32 vectors, best of {args.repeats}")
    print(f"{'d':>6} {'efficient ms':>13} {'matrix ms':>11} {'ratio':>8} {'mults ratio':>12}")
    for depth in args.depths:
        x = rng.normal(size=(args.batch, args.length, depth)).astype(np.float32)
        cos, sin = (table.astype(np.float32) for table in cos_sin_tables(args.length, depth))
        matrices = rotation_matrices(args.length, depth).astype(np.float32)
        assert np.allclose(rope_efficient(x, cos, sin), rope_matrix(x, matrices), atol=1e-4)
        efficient = best_time(lambda: rope_efficient(x, cos, sin), args.repeats)
        matrix = best_time(lambda: rope_matrix(x, matrices), args.repeats)
        ratio = matrix / efficient
        verdict = ""
        if depth == 256:
            verdict = f"  (target > {TARGET_RATIO_AT_256:g} x: {'met' if ratio > TARGET_RATIO_AT_256 else 'NOT met'})"
        print(f"{depth:>6} {efficient * 1e3:>13.3f} {matrix * 1e3:>11.3f} {ratio:>7.1f}x {depth / 2:>11.0f}x{verdict}")


if __name__ == "__main__":
    main()
