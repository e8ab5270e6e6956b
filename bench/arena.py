"""Computer levels against each other on duplicate deals: a thin wrapper of ``thousand arena``.

    python bench/arena.py --candidate medium --baseline easy --preset polish --players 3 \
        --deals 2000 --seed 1 --json

Same options and output as the ``arena`` subcommand (the method: ``core/ai/arena.py``).
Figures of full runs are kept in ``bench/results/ai.md``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from adapters.cli_arena import main

if __name__ == "__main__":
    main()
