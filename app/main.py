"""Entry point: no arguments starts the GUI, anything else is the CLI."""
from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        from app.ui.application import run_gui
        return run_gui()
    if args[0] == "export":           # charts need Qt, which app.cli may not import
        from app.ui.export_cmd import main as export_main
        return export_main(args[1:])
    from app.cli import main as cli_main
    return cli_main(args)


if __name__ == "__main__":
    sys.exit(main())
