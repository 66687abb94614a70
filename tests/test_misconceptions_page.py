"""The misconceptions chapter states each claim neutrally and lets the reader
decide: its headings once all read "Myth: ...", which gave every answer away,
and before that stated the myths as facts ("The exponent is k/d"). Each claim
is headed "Claim: ...", and its verdict, folded until the reader has judged,
opens with its answer in bold, names it once, gives the reasons after it and
links to the section that shows them; true and false claims are mixed."""

import re
from pathlib import Path

from chapter_text import chapter_markdown

CHAPTER = Path(__file__).resolve().parents[1] / "chapters" / "misconceptions.ipynb"
NOT_CLAIMS = {"Errata in published worked examples", "Summary", "Exercises"}
ANSWER = re.compile(r"\*\*(True|False|Partly\s+true|Unsupported)\*\*")


def sections() -> dict[str, str]:
    """Each ``##`` heading of the chapter and the Markdown that follows it."""
    text = chapter_markdown(CHAPTER)
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def claims() -> dict[str, str]:
    return {heading: body for heading, body in sections().items() if heading not in NOT_CLAIMS}


def verdict(body: str) -> str:
    start = body.index(":::{admonition} The verdict")
    return body[start:].split("\n", 2)[2].split("\n:::")[0].strip()


def test_every_section_but_the_errata_summary_and_exercises_is_a_neutral_claim():
    found = sections()
    assert set(found) - set(claims()) == NOT_CLAIMS
    assert len(claims()) >= 10
    not_neutral = [heading for heading in claims() if not heading.startswith("Claim: ")]
    assert not not_neutral, f"headings that are not stated as claims: {not_neutral}"
    for heading, body in claims().items():
        assert ":::{admonition} The claim" in body, heading
        assert "Myth" not in heading and "myth" not in body.lower(), heading


def test_every_verdict_answers_first_and_once_then_reasons_and_links_to_where_it_is_shown():
    for heading, body in claims().items():
        text = verdict(body)
        assert ANSWER.match(text), f"{heading}: the verdict does not open with its answer"
        assert len(ANSWER.findall(text)) == 1, f"{heading}: the verdict must name its answer once"
        assert len(text) > ANSWER.match(text).end() + 100, f"{heading}: the answer comes without its reasons"
        assert re.search(r"\{ref\}`(?:[^`<]*<)?[a-z0-9-]+>?`", text), f"{heading}: the verdict links nowhere"


def test_every_answer_given_is_defined_before_the_claims():
    opening = chapter_markdown(CHAPTER).split("\n## ", 1)[0]
    defined = {" ".join(found.lower().split())
               for found in re.findall(r"\*\*([A-Za-z ]+)\*\*:", opening)}
    answers = {" ".join(ANSWER.match(verdict(body)).group(1).lower().split()) for body in claims().values()}
    assert answers <= defined, f"answers the opening does not define: {answers - defined}"


def test_true_and_false_claims_are_mixed():
    answers = [" ".join(ANSWER.match(verdict(body)).group(1).lower().split()) for body in claims().values()]
    assert answers.count("true") >= 2 and answers.count("false") >= 2, answers
    # no run of four claims with the same answer
    runs = [answers[i:i + 4] for i in range(len(answers) - 3)]
    assert all(len(set(run)) > 1 for run in runs), answers
