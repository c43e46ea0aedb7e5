"""Write a synthetic LongMemEval-schema file at the S or M shape (timing only, never benchmark results).

    python bench/generate_longmemeval.py --shape s --questions 100 out/synthetic-lme-s.json
    python bench/generate_longmemeval.py --shape m --questions 50 --seed 1 out/synthetic-lme-m.json

Same arguments, same bytes. See bench/lme_shape.py for how sessions are made and shared.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.lme_shape import Shape, write  # noqa: E402


def shape_arguments(ap: argparse.ArgumentParser) -> None:
    """The --shape option and one option per Shape field (default: the shape's own value)."""
    ap.add_argument("--shape", choices=("s", "m"), default="s", help="s: ~50 sessions/question, m: ~500")
    for field in dataclasses.fields(Shape):
        ap.add_argument(f"--{field.name.replace('_', '-')}", type=type(field.default), default=None,
                        help=f"default: the shape's ({field.default} for s)")


def shape_from(args: argparse.Namespace) -> Shape:
    changes = {f.name: getattr(args, f.name) for f in dataclasses.fields(Shape) if getattr(args, f.name) is not None}
    return Shape.m(**changes) if args.shape == "m" else Shape.s(**changes)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    shape_arguments(ap)
    ap.add_argument("out", type=Path, help="the JSON file to write (a .about.txt is written beside it)")
    args = ap.parse_args()
    about = write(shape_from(args), args.out)
    print(json.dumps(about, indent=2))


if __name__ == "__main__":
    main()
