"""The ``glassgrad`` console command; ``glassgrad inspect script.py [args]`` (see glassgrad.inspect)."""
import sys


def main(argv=None) -> int:
    """Dispatch ``glassgrad <subcommand> ...``; only ``inspect`` exists."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] != "inspect":
        print("usage: glassgrad inspect [--steps N] [--out FILE] [--stop-after] [--plots] script.py "
              "[args]")
        return 2
    from .inspect import main as inspect_main
    return inspect_main(argv[1:])
