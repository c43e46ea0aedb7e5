"""The `membench` command: helpers around the workflow.

  membench validate SPEC [-p KEY=VALUE ...]   check that an adapter plugin loads and behaves
  membench compare A B [--tolerance T]         the figures (and data, code, config, environment) where two runs
                                               differ; exit 0 when every figure agrees within T (default 0)
"""

from __future__ import annotations

import sys


def _validate(argv: list[str]) -> int:
    from membench.runs.validate import main

    return main(argv)


def _compare(argv: list[str]) -> int:
    from membench.analysis.compare import main

    return main(argv)


COMMANDS = {"validate": _validate, "compare": _compare}


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in COMMANDS:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    return COMMANDS[args[0]](args[1:])


if __name__ == "__main__":
    sys.exit(main())
