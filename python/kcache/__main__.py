"""``python3 -m kcache ARGS``: runs the kcache CLI (warm, stats, explain, ...).

The CLI is the one implementation of those commands (its --help, --json and
exit codes are documented in tools/README.md); this only finds it — the one
installed beside this package, else the one on PATH — and replaces this
process with it, so output and exit codes are the CLI's own.
"""

import os
import shutil
import sys


def cli_path() -> str:
    """Returns the kcache CLI this package belongs to, or one on PATH, or ''."""
    try:
        from . import _paths

        path = _paths.CLI
        if _paths.CLI_IS_RELATIVE:
            path = os.path.normpath(os.path.join(os.path.dirname(__file__), path))
        if os.access(path, os.X_OK):
            return path
    except ImportError:
        pass
    return shutil.which("kcache") or ""


def main() -> None:
    path = cli_path()
    if not path:
        sys.stderr.write("kcache: the kcache command-line tool is not installed (nor on PATH)\n")
        sys.exit(2)
    sys.stdout.flush()
    os.execv(path, [path] + sys.argv[1:])


if __name__ == "__main__":
    main()
