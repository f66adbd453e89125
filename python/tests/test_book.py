"""The Python chapter's examples (docs/book/src/python.md) pass as written."""

import re
from pathlib import Path

CHAPTER = Path(__file__).resolve().parents[2] / "docs" / "book" / "src" / "python.md"


def test_the_chapters_examples_pass(pytester):
    blocks = re.findall(r"```python\n(.*?)```", CHAPTER.read_text(), re.S)
    assert len(blocks) == 4, f"the chapter's Python examples changed: {len(blocks)} blocks"
    three_lines, examples, api, unit = blocks
    # (its lab.yaml is the reader's own)
    pytester.makefile(".yaml", lab="nodes:\n  - name: pve\n")
    pytester.makepyfile(
        test_three=three_lines,
        test_examples=examples.replace("    ...\n", "    assert fake_pve_proxmoxer.nodes.get()\n"),
        test_unit=unit,
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=7)
