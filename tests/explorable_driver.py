"""Drive the explorable figures of a page in Chromium, as a reader would, and check them.

Used by tests/test_book.py on the chapters that carry the figures. For each
figure on a page, and each of its sliders, :func:`move_every_slider`:

1. reads the drawing (the SVG plotly.js drew: hands, points, labels);
2. drags the slider to another step with real input events: the mouse at a
   desktop width, a finger (touch events) at a phone width;
3. checks that plotly.js took the step, that the drawing changed, and that
   what is drawn is what pe_lib computes for the new setting of every slider:
   the angle of each clock hand on the screen, the wavelengths, the dot
   product and its label, the rotated query and key and their score.

The figure's parameters come from its layout's ``meta`` (set by
``pe_lib.course.display.explorable``) and the sliders' labels; the expected values are
recomputed here from ``pe_lib`` for that setting.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

import pe_lib
from pe_lib.similarity import offset_similarity
from pe_lib.rope import apply_rope

# Everything drawn in one figure, in plotly.js's own coordinates and in data units.
# Each visible trace: its index, the ends of its line on the screen (pixels,
# y down), the same in data units, its points in data units, and its text labels.
_READ_DRAWING = r"""(id) => {
  const gd = document.getElementById(id);
  const full = gd._fullLayout;
  const numbers = d => (d || '').match(/-?\d+(\.\d+)?(e-?\d+)?/g)?.map(Number) || [];
  const pairs = list => list.reduce((out, v, i) => (i % 2 ? out[out.length - 1].push(v) : out.push([v]), out), []);
  const traces = [];
  gd.querySelectorAll('.scatterlayer .trace').forEach(group => {
    const trace = group.__data__ && group.__data__[0] && group.__data__[0].trace;
    if (!trace || trace.visible !== true) return;
    const xa = full['xaxis' + trace.xaxis.slice(1)], ya = full['yaxis' + trace.yaxis.slice(1)];
    const line = group.querySelector('path.js-line');
    const screen = line ? pairs(numbers(line.getAttribute('d'))) : [];
    const points = Array.from(group.querySelectorAll('path.point')).map(p => {
      const [x, y] = numbers(p.getAttribute('transform'));
      return [xa.p2d(x), ya.p2d(y)];
    });
    traces.push({
      index: trace.index, screen,
      line: screen.map(([x, y]) => [xa.p2d(x), ya.p2d(y)]),
      points,
      texts: Array.from(group.querySelectorAll('text')).map(t => t.textContent),
    });
  });
  return {
    traces,
    annotations: Array.from(gd.querySelectorAll('.annotation-text')).map(t => t.textContent),
    sliders: full.sliders.map(s => ({active: s.active, label: s.steps[s.active].label})),
    meta: gd.layout.meta,
    // The same pixels per unit across and up: an angle on the screen is the angle in the data.
    square: ['', '2'].filter(n => full['xaxis' + n] && full['xaxis' + n].scaleanchor === undefined
                                  && full['yaxis' + n] && full['yaxis' + n].scaleanchor)
                      .every(n => Math.abs(full['xaxis' + n]._m + full['yaxis' + n]._m) < 1e-6),
  };
}"""

# Where each step of slider `index` sits on the screen, and the slider's grip and touch strip.
_SLIDER_GEOMETRY = """([id, index]) => {
  const gd = document.getElementById(id);
  const group = gd.querySelectorAll('.slider-container .slider-group')[index];
  const box = e => { const r = e.getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; };
  return {
    ticks: Array.from(group.querySelectorAll('rect.slider-tick-rect')).map(box),
    grip: box(group.querySelector('rect.slider-grip-rect')),
    strip: box(group.querySelector('rect.slider-rail-touch-rect')),
    labels: Array.from(group.querySelectorAll('text')).map(t => parseFloat(getComputedStyle(t).fontSize)),
  };
}"""


def figure_ids(page) -> list[str]:
    return page.evaluate("() => Array.from(document.querySelectorAll('.explorable .js-plotly-plot')).map(e => e.id)")


def read(page, figure_id: str) -> dict:
    return page.evaluate(_READ_DRAWING, figure_id)


def drag(page, start: tuple[float, float], end: tuple[float, float], touch: bool) -> None:
    """Press at ``start``, move to ``end`` in small steps, release: mouse or finger.

    Each step waits ``STEP_MS``, as a hand does: every step redraws the figure, and
    a busy machine must not receive the next step while it is still drawing."""
    path = [(start[0] + (end[0] - start[0]) * t / 4, start[1]) for t in range(5)]
    if not touch:
        page.mouse.move(*start)
        page.mouse.down()
        for x, y in path[1:]:
            page.wait_for_timeout(STEP_MS)
            page.mouse.move(x, y)
        page.wait_for_timeout(STEP_MS)
        page.mouse.up()
        return
    session = page.context.new_cdp_session(page)
    kinds = ["touchStart"] + ["touchMove"] * (len(path) - 1)
    for kind, (x, y) in zip(kinds, path):
        session.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": [{"x": x, "y": y}]})
        page.wait_for_timeout(STEP_MS)
    session.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    session.detach()


#: The pause between the steps of a drag, in milliseconds.
STEP_MS = 60
_ACTIVE_STEP = "([id, i]) => document.getElementById(id).layout.sliders[i].active"


def when_still(page, expression: str, arguments, every_ms: int, tries: int):
    """The value of ``expression`` once two readings ``every_ms`` apart agree, or
    ``None`` if it is still changing after ``tries`` readings."""
    value = page.evaluate(expression, arguments)
    for _ in range(tries):
        page.wait_for_timeout(every_ms)
        again = page.evaluate(expression, arguments)
        if again == value:
            return value
        value = again
    return None


def move_slider(page, figure_id: str, index: int, target: int, touch: bool) -> dict:
    """Drag slider ``index`` of the figure from its grip to step ``target``; return its geometry."""
    page.locator(f"#{figure_id}").scroll_into_view_if_needed()
    # A page still laying out (a scroll, a late font, plotly.js fitting the figure to
    # its column) would move the ticks between measuring and dragging.
    geometry = when_still(page, _SLIDER_GEOMETRY, [figure_id, index], every_ms=50, tries=40)
    assert geometry is not None, f"{figure_id} slider {index} kept moving for 2 s"
    grip_x, grip_y, grip_w, grip_h = geometry["grip"]
    tick_x, _, tick_w, _ = geometry["ticks"][target]
    centre_y = grip_y + grip_h / 2
    drag(page, (grip_x + grip_w / 2, centre_y), (tick_x + tick_w / 2, centre_y), touch)
    # plotly.js moves the grip to its step with a short transition; the caller reads
    # the step once it rests (and reports it if it never does)
    when_still(page, _ACTIVE_STEP, [figure_id, index], every_ms=200, tries=20)
    return geometry


def settings(drawing: dict) -> list[float]:
    return [float(slider["label"]) for slider in drawing["sliders"]]


def _near(a: float, b: float, tolerance: float) -> bool:
    return abs(a - b) <= tolerance


def _angle_gap(a: float, b: float) -> float:
    gap = (a - b) % (2 * math.pi)
    return min(gap, 2 * math.pi - gap)


def check_clock_hands(drawing: dict) -> list[str]:
    meta, (p,) = drawing["meta"], [int(v) for v in settings(drawing)]
    depth, neighbour = meta["depth"], meta["neighbour"]
    pairs = depth // 2
    table = pe_lib.sinusoidal_encoding(p + neighbour + 1, depth, base=meta["base"], dtype="float64")
    problems = []
    if not drawing["square"]:
        problems.append("the clock faces are not drawn with equal scales across and up")
    hands = {trace["index"]: trace for trace in drawing["traces"]}
    for clock, row in enumerate((p, p + neighbour)):
        for i in range(pairs):
            (x0, y0), (x1, y1) = hands[clock * pairs + i]["screen"]
            on_screen = math.atan2(x1 - x0, y0 - y1)            # clockwise from twelve o'clock
            expected = math.atan2(table[row, 2 * i], table[row, 2 * i + 1])
            if _angle_gap(on_screen, expected) > 0.02:
                problems.append(f"position {row}, pair {i}: hand at {on_screen:.3f} rad, pe_lib says {expected:.3f}")
    titles = [f"position {p}", f"position {p + neighbour}"]
    if drawing["annotations"][:2] != titles:
        problems.append(f"titles {drawing['annotations'][:2]}, expected {titles}")
    return problems


def check_wavelength_series(drawing: dict) -> list[str]:
    depth, base = settings(drawing)
    expected = pe_lib.wavelengths(int(depth), base=base)
    series = [trace for trace in drawing["traces"] if len(trace["points"]) > 0]
    bound = [trace for trace in drawing["traces"] if not trace["points"]]
    if len(series) != 1 or len(bound) != 1:
        return [f"{len(series)} series and {len(bound)} bounds drawn, expected one of each"]
    drawn = np.array([y for _, y in series[0]["points"]])
    problems = []
    if drawn.shape != expected.shape or not np.allclose(drawn, expected, rtol=2e-3):
        problems.append(f"depth {depth:g}, base {base:g}: wavelengths drawn {drawn[:3]}..., pe_lib {expected[:3]}...")
    if not all(_near(y / (2 * math.pi * base), 1.0, 2e-3) for _, y in bound[0]["line"]):
        problems.append(f"the bound is drawn at {bound[0]['line']}, not at 2 pi N = {2 * math.pi * base:g}")
    return problems


def check_dot_product_by_offset(drawing: dict) -> list[str]:
    offset, depth = settings(drawing)
    expected = float(offset_similarity(offset, int(depth), base=drawing["meta"]["base"])) / (depth / 2)
    markers = [trace for trace in drawing["traces"] if trace["texts"]]
    if len(markers) != 1 or len(markers[0]["points"]) != 1:
        return [f"{len(markers)} markers drawn, expected one"]
    (x, y), label = markers[0]["points"][0], markers[0]["texts"][0]
    problems = []
    if not (_near(x, offset, 0.01) and _near(y, expected, 2e-3)):
        problems.append(f"offset {offset:g}, depth {depth:g}: marker at ({x:.4f}, {y:.4f}), pe_lib {expected:.4f}")
    if label.replace("−", "-") != f"{expected:.4f}":
        problems.append(f"offset {offset:g}, depth {depth:g}: label {label!r}, pe_lib {expected:.4f}")
    return problems


def rope_score(drawing: dict) -> float:
    return float(drawing["annotations"][0].rsplit("=", 1)[1].replace("−", "-"))


def check_rotary_query_key(drawing: dict) -> list[str]:
    meta = drawing["meta"]
    m, k = (int(v) for v in settings(drawing))
    query = apply_rope(np.array([meta["query"]]), [m], rates=[meta["rate"]])[0]
    key = apply_rope(np.array([meta["key"]]), [m + k], rates=[meta["rate"]])[0]
    # The arrow's head is its last point (plotly.js stops the line short of it).
    drawn = {trace["index"]: np.array(trace["points"][-1]) for trace in drawing["traces"]}
    problems = []
    if not drawing["square"]:
        problems.append("the circle is not drawn with equal scales across and up")
    if set(drawn) != {0, 1 + k}:
        return problems + [f"arrows {sorted(drawn)} drawn, expected the query and key {k}"]
    if not np.allclose(drawn[0], query, atol=3e-3) or not np.allclose(drawn[1 + k], key, atol=3e-3):
        problems.append(f"m = {m}, n = {m + k}: arrows at {drawn[0]}, {drawn[1 + k]}; pe_lib {query}, {key}")
    score = float(query @ key)
    if not (_near(rope_score(drawing), score, 1e-3) and _near(float(drawn[0] @ drawn[1 + k]), score, 5e-3)):
        problems.append(f"m = {m}, n = {m + k}: score shown {rope_score(drawing)}, pe_lib {score:.4f}")
    return problems


CHECKS = {
    "clock_hands": check_clock_hands,
    "wavelength_series": check_wavelength_series,
    "dot_product_by_offset": check_dot_product_by_offset,
    "rotary_query_key": check_rotary_query_key,
}


def _signature(drawing: dict) -> tuple:
    return tuple((t["index"], tuple(map(tuple, t["screen"])), tuple(map(tuple, t["points"])), tuple(t["texts"]))
                 for t in drawing["traces"]) + tuple(drawing["annotations"])


def move_every_slider(page, touch: bool, screenshots: Path | None = None, tag: str = "") -> tuple[list[str], dict]:
    """Move each slider of each figure on the page to another step and check the drawing.

    Returns the problems found and, per figure, what was measured (for the report).
    Screenshots before and after each move go to ``screenshots``, if given.
    """
    problems, measured = [], {}
    for figure_id in figure_ids(page):
        # A resize of the window (a full-page screenshot makes two) leaves plotly.js a
        # redraw to do 100 ms later, which would move the slider under the pointer;
        # plotly.js's own resize cancels that pending redraw and resolves once it has drawn.
        page.evaluate("id => Plotly.Plots.resize(document.getElementById(id))", figure_id)
        before = read(page, figure_id)
        check = CHECKS[before["meta"]["figure"]]
        problems += [f"{figure_id} {tag} as first drawn: {p}" for p in check(before)]
        for index, slider in enumerate(before["sliders"]):
            steps = page.evaluate("([id, i]) => document.getElementById(id).layout.sliders[i].steps.length",
                                  [figure_id, index])
            target = (slider["active"] + max(1, (2 * steps) // 3)) % steps
            if screenshots:
                page.locator(f"#{figure_id}").screenshot(path=str(screenshots / f"{figure_id}-{tag}-slider{index}-before.png"))
            geometry = move_slider(page, figure_id, index, target, touch)
            after = read(page, figure_id)
            if screenshots:
                page.locator(f"#{figure_id}").screenshot(path=str(screenshots / f"{figure_id}-{tag}-slider{index}-after.png"))
            name = f"{figure_id} {tag} slider {index}"
            if after["sliders"][index]["active"] != target:
                problems.append(f"{name}: dragged to step {target}, plotly.js is at {after['sliders'][index]['active']}")
            if _signature(after) == _signature(before):
                problems.append(f"{name}: the drawing did not change")
            problems += [f"{name} at {after['sliders']}: {p}" for p in check(after)]
            if before["meta"]["figure"] == "rotary_query_key" and index == 0 and rope_score(after) != rope_score(before):
                problems.append(f"{name}: moving both positions changed the score")
            strip_height = geometry["strip"][3]
            if strip_height < 44:
                problems.append(f"{name}: the strip a finger can drag is {strip_height:.0f} px tall, under 44")
            if min(geometry["labels"]) < 12:
                problems.append(f"{name}: slider text of {min(geometry['labels'])} px, under 12")
            measured[f"{figure_id} slider {index}"] = {"from": slider["label"], "to": after["sliders"][index]["label"],
                                                      "strip_px": round(strip_height)}
            before = after
    return problems, measured
