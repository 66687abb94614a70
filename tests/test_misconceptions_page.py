"""The misconceptions chapter heads each section as a myth, never as a fact, and
links every myth to the chapter that teaches the truth (its headings once read
"The exponent is k/d" and "Positions start at 1", and its contents list with them)."""

import json
import re
from pathlib import Path

CHAPTER = Path(__file__).resolve().parents[1] / "chapters" / "misconceptions.ipynb"
NOT_MYTHS = {"Errata in published worked examples", "Summary", "Exercises"}


def sections() -> dict[str, str]:
    """Each ``##`` heading of the chapter and the Markdown that follows it."""
    cells = json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]
    text = "\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown")
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def test_every_section_but_the_errata_summary_and_exercises_is_headed_as_a_myth():
    found = sections()
    myths = {heading: body for heading, body in found.items() if heading not in NOT_MYTHS}
    assert set(found) - set(myths) == NOT_MYTHS
    assert len(myths) >= 8
    stated_as_facts = [heading for heading in myths if not heading.startswith("Myth: ")]
    assert not stated_as_facts, f"headings that state a myth as a fact: {stated_as_facts}"


def test_every_myth_states_the_truth_and_links_to_where_it_is_taught():
    for heading, body in sections().items():
        if heading in NOT_MYTHS:
            continue
        assert ":::{admonition} The myth" in body, heading
        truth = body[body.index("**The truth.**"):]
        assert re.search(r"\{ref\}`[a-z0-9-]+`", truth), f"{heading}: the truth links nowhere"
