"""The fake-pve package's own tests: they use its fixtures (the plugin is
loaded through the installed package's pytest11 entry point)."""

from pathlib import Path

import pytest

#: The repository's example scenarios.
SCENARIOS = Path(__file__).resolve().parents[2] / "fake-pve" / "scenarios"


@pytest.fixture
def scenarios() -> Path:
    return SCENARIOS
