"""The chapters in JupyterLab, as a learner runs them with ``python3 tasks.py lab``.

Starts ``tasks.py lab`` headless on a free port with a token, on a working copy
in a temporary folder (``PE_COURSE_LAB``), opens chapters in JupyterLab in
headless Chromium, runs all their cells, and checks what a learner sees: no
error or warning output, figures drawn, the numbers of the prose shown as
numbers, no MyST left raw, and the explorable figure still drawn and moving
after its cell runs again. Then it stops the lab as the README says and checks
that the server is gone and that the course's notebooks in chapters/ are
unchanged. Screenshots of each chapter after Run All land in
``_build/screenshots/lab-<chapter>.png``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from browser import require_browser
from chapter_text import chapter_markdown

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"
SCREENSHOTS = ROOT / "_build" / "screenshots"
#: One chapter with an explorable figure, one that trains models.
OPENED = ("sinusoidal_encoding", "learned_vs_fixed")
#: Seconds a chapter may take to run all its cells in the lab (the nbval budget, with room
#: for the browser on a 2-core machine).
RUN_ALL_LIMIT = 240

# MyST that a renderer would have turned into something else.
RAW_MYST = re.compile(r"\{[a-z]+(:[a-z]+)?\}`|^:::|^```\{|^:(alt|name|figclass|class|label):|^\([\w-]+\)=\s*$",
                      re.MULTILINE)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _digests() -> dict[str, str]:
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in sorted(CHAPTERS.rglob("*"))
            if path.is_file()}


def _glued_texts(chapter: str) -> dict[str, str]:
    """The text each name is glued as in the committed notebook (what the book shows)."""
    notebook = json.loads((CHAPTERS / f"{chapter}.ipynb").read_text())
    texts = {}
    for cell in notebook["cells"]:
        for output in cell.get("outputs", ()):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            text = output.get("data", {}).get("application/papermill.record/text/plain")
            if name and text:
                texts[name] = text.strip("'")
    return texts


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """``python3 tasks.py lab`` on a free port; yields (url, token); stops it and checks it is gone."""
    require_browser()
    home = tmp_path_factory.mktemp("lab")
    port, token = _free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "PE_COURSE_LAB": str(home / "lab"),
        # A learner's own Jupyter settings and workspaces play no part in the test.
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        # A font cache of its own: one written by another Matplotlib installation can lack
        # the fonts this one ships, and the kernels would warn about it.
        "MPLCONFIGDIR": str(home / "matplotlib"),
    }
    # Matplotlib builds that font cache once, and says so on stderr: not under a chapter's cell.
    subprocess.run([sys.executable, "-c", "import matplotlib.font_manager"],
                   env=env, check=True, capture_output=True)
    before = _digests()
    log = (home / "lab.log").open("w")
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "tasks.py"), "lab", "--no-browser", f"--port={port}",
         "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}",
         "--LabApp.expose_app_in_browser=True"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=5)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("tasks.py lab did not start:\n" + (home / "lab.log").read_text()[-3000:])
                time.sleep(1)
        yield url, token, home / "lab"
    finally:
        # The README's way to stop it: Ctrl-C (SIGINT) on the command, which is the server itself.
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            pytest.fail("tasks.py lab did not stop on one Ctrl-C")
        log.close()
    with pytest.raises(OSError):
        urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=5)
    assert _digests() == before, "running chapters in the lab changed the course's files in chapters/"


@pytest.fixture(scope="module")
def page(lab, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    yield context.new_page()
    context.close()


def open_and_run_all(page, lab, chapter: str) -> float:
    """Open ``chapter`` in JupyterLab, run all its cells, wait for them; return the seconds taken."""
    url, token, _ = lab
    # ?reset: a fresh workspace, with this chapter alone open and current.
    page.goto(f"{url}/lab/tree/{chapter}.ipynb?reset&token={token}")
    current = ("() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
               f" return w && w.context && w.context.path === '{chapter}.ipynb' ? w : null; }}")
    page.wait_for_function(f"() => {{ const w = ({current})();"
                           " return w && w.sessionContext.session && w.sessionContext.session.kernel"
                           " && w.sessionContext.session.kernel.status === 'idle'; }",
                           timeout=180_000, polling=500)
    began = time.monotonic()
    # As a learner does it: Run > Run All Cells.
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.get_by_text("Run All Cells", exact=True).click()
    prompts = f"[...({current})().node.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')]"
    # The saved prompts are numbered already: first see the run start ([*] queued)
    # (as long as the kernel's start may take: a loaded machine is slow to queue)...
    page.wait_for_function(f"() => {prompts}.some(p => p.textContent.includes('*'))",
                           timeout=180_000, polling=100)
    # ... then end: every code cell numbered, none queued, the kernel idle.
    page.wait_for_function(f"""() => {{
        const kernel = ({current})().sessionContext.session.kernel;
        return {prompts}.every(p => /\\[\\d+\\]/.test(p.textContent)) && kernel.status === 'idle';
    }}""", timeout=RUN_ALL_LIMIT * 1000, polling=500)
    seconds = time.monotonic() - began
    page.wait_for_timeout(1500)  # MyST re-renders the prose once its expressions are back
    return seconds


@pytest.fixture(scope="module")
def chapters_run(page, lab):
    """Each opened chapter run once: {chapter: seconds for Run All}."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    times = {}
    for chapter in OPENED:
        times[chapter] = open_and_run_all(page, lab, chapter)
        _check_chapter(page, chapter)
        page.screenshot(path=str(SCREENSHOTS / f"lab-{chapter}.png"))
        figure = page.locator(".jp-OutputArea-output img").first
        if figure.count():
            figure.scroll_into_view_if_needed()
            page.screenshot(path=str(SCREENSHOTS / f"lab-{chapter}-figure.png"))
        print(f"{chapter}: Run All in {times[chapter]:.1f} s")
    return times


_FINDINGS = {}


def _check_chapter(page, chapter):
    # A busy machine may still be decoding the new outputs' images: read again, for up to
    # 30 s, until every caption has its figure above it.
    deadline = time.monotonic() + 30
    while True:
        _FINDINGS[chapter] = page.evaluate(_READ_CHAPTER)
        if not _FINDINGS[chapter]["uncaptioned"] or time.monotonic() > deadline:
            return
        page.wait_for_timeout(500)


_READ_CHAPTER = """() => {
        const panel = window.jupyterapp.shell.currentWidget.node;
        // Solutions are folded (dropdowns), as on the page: open them to read their numbers.
        // (Not the boxes of unknown directives, which fold their source away: see
        // test_every_directive_is_known.)
        panel.querySelectorAll('details').forEach(d => {
            const summary = d.querySelector('summary');
            if (!(summary && /Unknown Directive/.test(summary.innerText))) d.open = true;
        });
        const visible = e => !!(e.offsetWidth || e.offsetHeight || e.getClientRects().length)
                           && !e.closest('.jp-mod-hidden, .lm-mod-hidden');
        const outputs = [...panel.querySelectorAll('.jp-OutputArea-output')].filter(visible);
        const errors = outputs.filter(o => o.matches(
            '[data-mime-type="application/vnd.jupyter.stderr"], [data-mime-type="application/vnd.jupyter.error"]')
            || o.querySelector('[data-mime-type="application/vnd.jupyter.stderr"],'
                               + '[data-mime-type="application/vnd.jupyter.error"]'));
        const images = [...panel.querySelectorAll('.jp-OutputArea-output img, .jp-OutputArea-output svg.main-svg')]
            .filter(e => visible(e) && e.getBoundingClientRect().height > 50);
        const markdown = [...panel.querySelectorAll('.jp-MarkdownCell .jp-RenderedMarkdown, .jp-MarkdownCell .myst')]
            .filter(visible);
        const expressions = [...panel.querySelectorAll('.myst-RenderedExpression, [class*="inline-expression"]')];
        // A caption is a numbered figure in a Markdown cell; its figure is the output of a cell
        // just above it (only collapsed bookkeeping cells may stand between them).
        const cells = [...panel.querySelectorAll('.jp-Cell')];
        const captioned = [...panel.querySelectorAll('.jp-MarkdownCell figure[id]')]
            .filter(f => /^Figure\\s\\d+:/.test(f.querySelector('figcaption') ? f.querySelector('figcaption').innerText : ''));
        const drawn = cell => [...cell.querySelectorAll('.jp-OutputArea-output img, .jp-OutputArea-output .explorable')]
            .some(e => visible(e) && e.getBoundingClientRect().height > 50);
        const uncaptioned = captioned.filter(f => {
            const index = cells.indexOf(f.closest('.jp-Cell'));
            return !cells.slice(Math.max(0, index - 3), index).some(drawn);
        }).map(f => f.id);
        const figureIds = new Set(captioned.map(f => f.id));
        const references = [...panel.querySelectorAll('.jp-MarkdownCell a[href^="#"]')]
            .filter(a => figureIds.has(a.getAttribute('href').slice(1)) && !a.closest('figcaption')
                         && /^Figure\\s\\d+$/.test(a.innerText.trim()))
            .map(a => a.getAttribute('href').slice(1));
        return {
            errors: errors.map(e => e.innerText.slice(0, 300)),
            images: images.length,
            prose: markdown.map(m => m.innerText).join('\\n\\n'),
            expressions: expressions.map(e => e.innerText.trim()),
            captions: captioned.map(f => f.id),
            uncaptioned: uncaptioned,
            figure_references: references,
        };
    }"""


@pytest.mark.parametrize("chapter", OPENED)
def test_runs_without_errors_or_warnings(chapters_run, chapter):
    assert not _FINDINGS[chapter]["errors"], _FINDINGS[chapter]["errors"]


@pytest.mark.parametrize("chapter", OPENED)
def test_figures_are_shown(chapters_run, chapter):
    assert _FINDINGS[chapter]["images"] >= 1


@pytest.mark.parametrize("chapter", OPENED)
def test_prose_shows_the_glued_numbers(chapters_run, chapter):
    prose = _FINDINGS[chapter]["prose"]
    glued = _glued_texts(chapter)
    prose_source = chapter_markdown(CHAPTERS / f"{chapter}.ipynb")
    quoted = set(re.findall(r"\{eval\}`(\w+)`", prose_source))
    assert quoted, "the chapter quotes no glued number"
    missing = sorted(name for name in quoted if name in glued and glued[name] not in prose)
    assert not missing, f"numbers not shown in the rendered prose: {missing[:10]}"
    assert not any(name in prose.split() for name in quoted), "a glued name is shown instead of its number"


@pytest.mark.parametrize("chapter", OPENED)
def test_prose_shows_what_the_book_pastes(chapters_run, chapter):
    """Text glued by ``glue`` (here or in another chapter) and each figure's caption, in its place."""
    prose_source = chapter_markdown(CHAPTERS / f"{chapter}.ipynb")
    findings = _FINDINGS[chapter]
    missing = []
    for other, name in re.findall(r"\{glue:text\}`(?:([\w-]+)\.ipynb::)?(\w+)[^`]*`", prose_source):
        text = _glued_texts(other or chapter)[name]
        if text not in findings["prose"]:
            missing.append(f"{name} ({text})")
    assert not missing, f"glued text not shown in the rendered prose: {missing}"
    labels = re.findall(r"```\{glue:figure\}[^\n]*\n(?::[^\n]*\n)*?:name:\s*(\S+)", prose_source)
    assert labels, "the chapter has no captioned figure"
    assert findings["captions"] == labels, "each figure's caption, numbered, in the order of the text"
    assert not findings["uncaptioned"], f"captions with no figure just above them: {findings['uncaptioned']}"
    references = re.findall(r"\{numref\}`([\w-]+)`", prose_source)
    assert findings["figure_references"] == [r for r in references if r in labels], \
        "a {numref} to a figure is not drawn as a link to it"


@pytest.mark.parametrize("chapter", OPENED)
def test_no_raw_myst_in_the_prose(chapters_run, chapter):
    raw = sorted({m.group(0) for m in RAW_MYST.finditer(_FINDINGS[chapter]["prose"])})
    assert not raw, f"MyST left unrendered: {raw}"


@pytest.mark.parametrize("chapter", OPENED)
def test_every_directive_is_known(chapters_run, chapter):
    """The book's glue directives are written for JupyterLab in the learner's copy (``for_the_lab``)."""
    unknown = sorted(set(re.findall(r"([\w:]+) - Unknown Directive", _FINDINGS[chapter]["prose"])))
    assert not unknown, f"directives JupyterLab cannot draw: {unknown}"


def test_explorable_figure_moves_after_a_rerun(chapters_run, page, lab):
    """The sinusoidal encoding's clock figure, after its chapter runs again: drawn, and moved by keyboard and mouse."""
    open_and_run_all(page, lab, "sinusoidal_encoding")
    figure = page.locator(".jp-OutputArea-output .explorable").first
    figure.scroll_into_view_if_needed()
    height = figure.bounding_box()["height"]
    assert height > 200, f"the figure is not drawn after the rerun ({height:.0f} px high)"
    slider = figure.locator("input.explorable-slider").first
    status = figure.locator(".explorable-status").first

    def moved(how: str, move) -> None:
        before_value, before_status = slider.input_value(), status.inner_text()
        move()
        page.wait_for_timeout(500)
        assert slider.input_value() != before_value, f"the slider did not move by {how}"
        assert status.inner_text() != before_status, f"the figure did not change when {how} moved its slider"
        after = figure.bounding_box()["height"]
        assert after > 0.8 * height, (f"the figure collapsed from {height:.0f} to {after:.0f} px "
                                      f"when {how} moved its slider")

    def keys() -> None:
        slider.focus()
        for _ in range(5):
            page.keyboard.press("ArrowRight")
        # The keys moved the slider, not the notebook's selection: the slider keeps the focus.
        assert slider.evaluate("s => document.activeElement === s"), "a key took the focus off the slider"

    def drag() -> None:
        box = slider.bounding_box()
        middle = box["y"] + box["height"] / 2
        page.mouse.move(box["x"] + 4, middle)
        page.mouse.down()
        page.mouse.move(box["x"] + 0.7 * box["width"], middle, steps=8)
        page.mouse.up()

    moved("the keyboard", keys)
    moved("the mouse", drag)


def test_run_all_times(chapters_run):
    """Each chapter runs in the lab within its budget; the times are printed with -s."""
    for chapter, seconds in chapters_run.items():
        assert seconds < RUN_ALL_LIMIT, f"{chapter}: {seconds:.1f} s"
