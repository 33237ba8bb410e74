"""How many examples a property test tries: today's sizes in CI, a fifth of them locally.

conftest.py loads the Hypothesis profile `ci` under CO_TUI_CI=1 (Hypothesis's default of 100
examples) and `dev` otherwise (20). A test that names its own size scales it by the same
ratio with `examples(n)`, so the inner loop stays quick and CI still runs the full sizes.
"""

from __future__ import annotations

from hypothesis import settings

CI_EXAMPLES = 100
DEV_EXAMPLES = 20
MIN_EXAMPLES = 10


def examples(in_ci: int) -> int:
    """`in_ci` under the ci profile; the same fraction of it as the loaded profile's default."""
    scaled = in_ci * settings.default.max_examples // CI_EXAMPLES
    return max(min(in_ci, MIN_EXAMPLES), scaled)
