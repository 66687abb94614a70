"""Drive the explorable figures of a page in Chromium, as a reader would, and check them.

Used by tests/test_book.py on the chapters that carry the figures. For each
figure on a page, and each of its sliders (a native range input),
:func:`move_every_slider`:

1. reads the drawing (the SVG the figure's script keeps up to date: hands,
   points, texts), the sliders' values as announced (``aria-valuetext``) and
   the sentence of the live region;
2. moves the slider: with the mouse at a desktop width, with a finger (touch
   events) at a phone width, or with the keyboard (Tab to it from the element
   before it, then the arrow keys, End and Home);
3. checks that the slider took the step, that the drawing and the announced
   value changed, and that what is drawn is what pe_lib computes for the new
   setting of every slider: the angle of each clock hand on the screen, the
   wavelengths, the dot product and its label, the rotated query and key and
   their score.

The figure's parameters come from its data's ``meta`` (set by
``pe_lib.course.display.explorable``) and the sliders' labels; the expected
values are recomputed here from ``pe_lib`` for that setting. Points drawn in the
SVG are taken back to data units with the figure's own map from data to the
drawing (``test_explorable`` checks that map against matplotlib's drawing).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

import pe_lib
from pe_lib.similarity import offset_similarity
from pe_lib import rope_scaling
from pe_lib.rope import apply_rope

# Everything drawn in one figure, in the SVG's units and in data units.
_READ_DRAWING = r"""(name) => {
  const root = document.querySelector(`[data-explorable="${name}"]`);
  const data = JSON.parse(root.querySelector('script.explorable-data').textContent);
  const numbers = d => (d || '').match(/-?\d+(\.\d+)?(e-?\d+)?/g)?.map(Number) || [];
  const pairs = list => list.reduce((out, v, i) => (i % 2 ? out[out.length - 1].push(v) : out.push([v]), out), []);
  const maps = {};
  data.parts.forEach(p => { if (p.map) maps[p.name] = p.map; });
  const parts = {};
  root.querySelectorAll('[data-part]').forEach(element => {
    const line = element.querySelector('path[clip-path], :scope > path');
    const map = maps[element.dataset.part];
    const back = ([x, y]) => map ? [(x - map[0]) / map[1], (y - map[2]) / map[3]] : [x, y];
    const markers = Array.from(element.querySelectorAll('use')).map(
      u => [Number(u.getAttribute('x')), Number(u.getAttribute('y'))]);
    const screen = line ? pairs(numbers(line.getAttribute('d'))) : [];
    parts[element.dataset.part] = {
      shown: getComputedStyle(element).visibility !== 'hidden' && element.getClientRects().length > 0,
      text: (element.querySelector('text') || element).textContent,
      screen, line: screen.map(back), markers: markers.map(back),
    };
  });
  const inputs = Array.from(root.querySelectorAll('input.explorable-slider'));
  return {
    parts,
    sliders: inputs.map((input, k) => ({
      active: Number(input.value), steps: Number(input.max) + 1, label: data.sliders[k].labels[Number(input.value)],
      name: data.sliders[k].name, valuetext: input.getAttribute('aria-valuetext'),
      shown: root.querySelectorAll('output.explorable-value')[k].textContent,
    })),
    status: root.querySelector('.explorable-status').textContent,
    live: root.querySelector('.explorable-status').getAttribute('aria-live'),
    meta: data.meta,
  };
}"""

# Where slider `index` is on the screen, and how large its label's text is.
_SLIDER_GEOMETRY = """([name, index]) => {
  const root = document.querySelector(`[data-explorable="${name}"]`);
  const input = root.querySelectorAll('input.explorable-slider')[index];
  const r = input.getBoundingClientRect();
  return {box: [r.x, r.y, r.width, r.height],
          label: parseFloat(getComputedStyle(input.closest('label')).fontSize)};
}"""

# Focus the element that comes just before slider `index` in the order Tab follows,
# so that one press of Tab must land on the slider.
_FOCUS_BEFORE = """([name, index]) => {
  const root = document.querySelector(`[data-explorable="${name}"]`);
  const input = root.querySelectorAll('input.explorable-slider')[index];
  const tabbable = Array.from(document.querySelectorAll(
    'a[href], button, input, select, textarea, summary, [tabindex]:not([tabindex="-1"])'))
    .filter(e => !e.disabled && e.tabIndex >= 0 && e.getClientRects().length > 0
                 && getComputedStyle(e).visibility !== 'hidden'
                 // inside a folded cell (a closed <details>) an element keeps its box but takes no focus
                 && e.checkVisibility());
  const at = tabbable.indexOf(input);
  if (at < 1) return false;
  tabbable[at - 1].focus();
  return document.activeElement === tabbable[at - 1];
}"""
_FOCUSED = """([name, index]) => {
  const root = document.querySelector(`[data-explorable="${name}"]`);
  const input = root.querySelectorAll('input.explorable-slider')[index];
  const style = getComputedStyle(input);
  return {focused: document.activeElement === input,
          ring: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2};
}"""


def figure_ids(page) -> list[str]:
    return page.evaluate("() => Array.from(document.querySelectorAll('.explorable.explorable-ready'))"
                         ".map(e => e.dataset.explorable)")


def read(page, name: str) -> dict:
    return page.evaluate(_READ_DRAWING, name)


def drag(page, start: tuple[float, float], end: tuple[float, float], touch: bool) -> None:
    """Press at ``start``, move to ``end`` in small steps, release: mouse or finger."""
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
STEP_MS = 40
#: The width of Chromium's thumb of a range input, in CSS pixels: the thumb's
#: centre travels from half of it to the width less half of it.
THUMB_PX = 16


def thumb_x(box: list[float], step: int, steps: int) -> float:
    left, _, width, _ = box
    return left + THUMB_PX / 2 + (width - THUMB_PX) * (step / max(steps - 1, 1))


def move_by_pointer(page, name: str, index: int, target: int, steps: int, active: int, touch: bool) -> dict:
    """Drag slider ``index`` of the figure from its thumb to step ``target``; return its geometry."""
    page.locator(f'[data-explorable="{name}"] input.explorable-slider').nth(index).scroll_into_view_if_needed()
    geometry = page.evaluate(_SLIDER_GEOMETRY, [name, index])
    box = geometry["box"]
    centre_y = box[1] + box[3] / 2
    drag(page, (thumb_x(box, active, steps), centre_y), (thumb_x(box, target, steps), centre_y), touch)
    return geometry


def move_by_keyboard(page, name: str, index: int, keys: list[str]) -> list[str]:
    """Tab to slider ``index`` from the element before it, then press ``keys``; the problems found."""
    if not page.evaluate(_FOCUS_BEFORE, [name, index]):
        return ["nothing before the slider can be focused, or the slider is not in the Tab order"]
    page.keyboard.press("Tab")
    focus = page.evaluate(_FOCUSED, [name, index])
    problems = []
    if not focus["focused"]:
        problems.append("Tab from the element before it does not reach the slider")
    elif not focus["ring"]:
        problems.append("the focused slider shows no focus ring of 2 px or more")
    for key in keys:
        page.keyboard.press(key)
    return problems


def settings(drawing: dict) -> list[float]:
    return [float(slider["label"].replace(",", "")) for slider in drawing["sliders"]]


def _near(a: float, b: float, tolerance: float) -> bool:
    return abs(a - b) <= tolerance


def _angle_gap(a: float, b: float) -> float:
    gap = (a - b) % (2 * math.pi)
    return min(gap, 2 * math.pi - gap)


def check_clock_hands(drawing: dict) -> list[str]:
    meta, (p,) = drawing["meta"], [int(v) for v in settings(drawing)]
    depth, neighbour, centres = meta["depth"], meta["neighbour"], meta["centres"]
    pairs = depth // 2
    table = pe_lib.sinusoidal_encoding(p + neighbour + 1, depth, base=meta["base"], dtype="float64")
    parts, problems = drawing["parts"], []
    said = []
    for clock, row in enumerate((p, p + neighbour)):
        angles = []
        for i in range(pairs):
            hand = parts[f"hand-{clock}-{i}"]
            (x0, y0), (x1, y1) = hand["screen"]
            on_screen = math.atan2(x1 - x0, y0 - y1)            # clockwise from twelve o'clock, y down
            expected = math.atan2(table[row, 2 * i], table[row, 2 * i + 1])
            if _angle_gap(on_screen, expected) > 0.02:
                problems.append(f"position {row}, pair {i}: hand at {on_screen:.3f} rad, pe_lib says {expected:.3f}")
            if not _near(hand["line"][0][0], centres[clock], 1e-3):
                problems.append(f"position {row}, pair {i}: the hand does not start at its clock's centre")
            (tip,) = parts[f"tip-{clock}-{i}"]["markers"]
            if not np.allclose(tip, hand["line"][1], atol=1e-3):
                problems.append(f"position {row}, pair {i}: the dot is at {tip}, the hand ends at {hand['line'][1]}")
            angles.append(f"{round(math.degrees(expected)) % 360}°")
        listed = ", ".join(angles[:-1]) + " and " + angles[-1] if len(angles) > 1 else angles[0]
        said.append(f"Position {row}: hands at {listed}.")
        if parts[f"title-{clock}"]["text"] != f"position {row}":
            problems.append(f"clock {clock} is titled {parts[f'title-{clock}']['text']!r}, not position {row}")
    if drawing["status"] != " ".join(said):
        problems.append(f"the live region says {drawing['status']!r}, pe_lib gives {' '.join(said)!r}")
    return problems


def check_wavelength_series(drawing: dict) -> list[str]:
    depth, base = settings(drawing)
    expected = pe_lib.wavelengths(int(depth), base=base)
    parts = drawing["parts"]
    shown = [name for name, part in parts.items() if name.startswith("series-") and part["shown"]]
    if len(shown) != 1:
        return [f"{len(shown)} series shown, expected one"]
    drawn = 10 ** np.array([y for _, y in parts[shown[0]]["markers"]])
    problems = []
    if drawn.shape != expected.shape or not np.allclose(drawn, expected, rtol=2e-3):
        problems.append(f"depth {depth:g}, base {base:g}: wavelengths drawn {drawn[:3]}..., pe_lib {expected[:3]}...")
    if not all(_near(10 ** y / (2 * math.pi * base), 1.0, 2e-3) for _, y in parts["bound"]["line"]):
        problems.append(f"the bound is drawn at {parts['bound']['line']}, not at 2 pi N = {2 * math.pi * base:g}")
    if parts["title"]["text"] != f"width D = {depth:g}, base N = {base:,.0f}":
        problems.append(f"the title says {parts['title']['text']!r}")
    longest = f"{round(expected[-1]):,}" if expected[-1] >= 1000 else f"{expected[-1]:.4g}"
    if f"{int(depth) // 2} wavelengths from 6.28 to {longest} positions" not in drawing["status"]:
        problems.append(f"the live region says {drawing['status']!r}")
    return problems


def check_mean_curve_and_marker(drawing: dict) -> list[str]:
    """The bottom panel: the curve of the depth chosen, and the marker, label and
    live region at the offset chosen, against pe_lib's offset similarity."""
    offset, depth = settings(drawing)
    expected = float(offset_similarity(offset, int(depth), base=drawing["meta"]["base"])) / (depth / 2)
    parts = drawing["parts"]
    shown = [name for name, part in parts.items() if name.startswith("curve-") and part["shown"]]
    if len(shown) != 1:
        return [f"{len(shown)} curves shown, expected one"]
    (x, y), label = parts["marker"]["markers"][0], parts["value"]["text"]
    problems = []
    if not (_near(x, offset, 0.01) and _near(y, expected, 2e-3)):
        problems.append(f"offset {offset:g}, depth {depth:g}: marker at ({x:.4f}, {y:.4f}), pe_lib {expected:.4f}")
    curve = dict((round(cx), cy) for cx, cy in parts[shown[0]]["line"])
    if not _near(curve.get(round(offset), math.inf), expected, 2e-3):
        problems.append(f"offset {offset:g}, depth {depth:g}: the curve shown is not depth {depth:g}'s")
    value = f"{expected:.4f}"
    if label.replace("−", "-") != f"Δ = {offset:g}: {value}":
        problems.append(f"offset {offset:g}, depth {depth:g}: label {label!r}, pe_lib {value}")
    if drawing["status"].replace("−", "-") != f"Offset {offset:g}, depth {depth:g}: dot product ÷ (D/2) = {value}.":
        problems.append(f"the live region says {drawing['status']!r}, pe_lib {value}")
    return problems


def rope_score(drawing: dict) -> float:
    return float(drawing["parts"]["score"]["text"].rsplit("=", 1)[1].replace("−", "-"))


def check_rotary_query_key(drawing: dict) -> list[str]:
    meta = drawing["meta"]
    m, k = (int(v) for v in settings(drawing))
    query = apply_rope(np.array([meta["query"]]), [m], rates=[meta["rate"]])[0]
    key = apply_rope(np.array([meta["key"]]), [m + k], rates=[meta["rate"]])[0]
    # Each arrow's tip is the second point of its line (the centre, the tip, the head).
    drawn = {name: np.array(drawing["parts"][name]["line"][1]) for name in ("query", "key")}
    problems = []
    if not np.allclose(drawn["query"], query, atol=3e-3) or not np.allclose(drawn["key"], key, atol=3e-3):
        problems.append(f"m = {m}, n = {m + k}: arrows at {drawn['query']}, {drawn['key']}; pe_lib {query}, {key}")
    score = float(query @ key)
    if not (_near(rope_score(drawing), score, 1e-3) and _near(float(drawn["query"] @ drawn["key"]), score, 5e-3)):
        problems.append(f"m = {m}, n = {m + k}: score shown {rope_score(drawing)}, pe_lib {score:.4f}")
    if drawing["parts"]["positions"]["text"] != f"m = {m}, n = {m + k}":
        problems.append(f"the positions read {drawing['parts']['positions']['text']!r}")
    if not drawing["status"].startswith(f"Query at m = {m}, key at n = {m + k}: score "):
        problems.append(f"the live region says {drawing['status']!r}")
    return problems


def check_dot_product_by_pair(drawing: dict) -> list[str]:
    """The curve and marker (:func:`check_mean_curve_and_marker`), and above them
    each pair's term cos(k omega_i), at its place 2i/D, and their mean."""
    problems = check_mean_curve_and_marker(drawing)
    offset, depth = settings(drawing)
    rates = pe_lib.angle_rates(int(depth), base=drawing["meta"]["base"])
    parts = drawing["parts"]
    shown = [name for name, part in parts.items() if name.startswith("pairs-") and part["shown"]]
    if len(shown) != 1:
        return problems + [f"{len(shown)} sets of pairs shown, expected one"]
    drawn = np.array(parts[shown[0]]["markers"])
    places = 2 * np.arange(int(depth) // 2) / depth
    if drawn.shape != (len(rates), 2) or not (np.allclose(drawn[:, 0], places, atol=2e-3)
                                              and np.allclose(drawn[:, 1], np.cos(offset * rates), atol=2e-3)):
        problems.append(f"offset {offset:g}, depth {depth:g}: the pairs' terms drawn are not cos(k omega_i)")
    expected = float(offset_similarity(offset, int(depth), base=drawing["meta"]["base"])) / (depth / 2)
    if not all(_near(y, expected, 2e-3) for _, y in parts["mean"]["line"]):
        problems.append(f"offset {offset:g}, depth {depth:g}: the mean is drawn at {parts['mean']['line']}")
    return problems


def check_context_extension_rates(drawing: dict) -> list[str]:
    """Each method's line against pe_lib.rope_scaling at the scale shown."""
    meta, (scale,) = drawing["meta"], settings(drawing)
    depth, base, trained = meta["depth"], meta["base"], meta["original_length"]
    plain = pe_lib.angle_rates(depth, base=base)
    problems = []
    for method in ("rope", *rope_scaling.SCALINGS):
        options = {"original_length": trained} if method in rope_scaling.NEED_ORIGINAL_LENGTH else {}
        if method == "rope_dynamic":
            options["length"] = round(scale * trained)
        rates = rope_scaling.scaled_rates(method, depth, scale=scale, base=base, **options)
        drawn = np.array(drawing["parts"][method]["line"])
        expected = np.log2(scale * rates / plain)
        if drawn.shape != (depth // 2, 2) or not np.allclose(drawn[:, 1], expected, atol=2e-3):
            problems.append(f"scale {scale:g}: {method} is not drawn at s theta'_i / theta_i")
    if f"Scale {scale:g}, run on {round(scale * trained)} positions." not in drawing["status"]:
        problems.append(f"the live region says {drawing['status']!r}")
    if not drawing["parts"]["title"]["text"].startswith(f"s = {scale:g}:"):
        problems.append(f"the title says {drawing['parts']['title']['text']!r}")
    return problems


CHECKS = {
    "clock_hands": check_clock_hands,
    "wavelength_series": check_wavelength_series,
    "dot_product_by_pair": check_dot_product_by_pair,
    "rotary_query_key": check_rotary_query_key,
    "context_extension_rates": check_context_extension_rates,
}


def _signature(drawing: dict) -> tuple:
    return tuple((name, part["shown"], part["text"], tuple(map(tuple, part["screen"])),
                  tuple(map(tuple, part["markers"]))) for name, part in sorted(drawing["parts"].items()))


def _announced(drawing: dict, index: int) -> list[str]:
    """What is wrong with how slider ``index`` states its value: in words and on the screen."""
    slider = drawing["sliders"][index]
    problems = []
    if slider["valuetext"] != f"{slider['name']} {slider['label']}":
        problems.append(f"announced as {slider['valuetext']!r}, not {slider['name']} {slider['label']}")
    if slider["shown"] != slider["label"]:
        problems.append(f"shows {slider['shown']!r} beside it, not {slider['label']}")
    if drawing["live"] != "polite":
        problems.append("the figure's sentence is not in a live region")
    return problems


def _after_move(name: str, before: dict, after: dict, index: int, target: int, check) -> list[str]:
    problems = []
    if after["sliders"][index]["active"] != target:
        problems.append(f"{name}: moved to step {target}, the slider is at {after['sliders'][index]['active']}")
    if _signature(after) == _signature(before):
        problems.append(f"{name}: the drawing did not change")
    if after["status"] == before["status"]:
        problems.append(f"{name}: the live region did not change")
    problems += [f"{name}: {p}" for p in _announced(after, index)]
    problems += [f"{name} at {[s['label'] for s in after['sliders']]}: {p}" for p in check(after)]
    if after["meta"]["figure"] == "rotary_query_key" and index == 0 and rope_score(after) != rope_score(before):
        problems.append(f"{name}: moving both positions changed the score")
    return problems


def move_every_slider(page, touch: bool, screenshots: Path | None = None, tag: str = "") -> tuple[list[str], dict]:
    """Move each slider of each figure on the page, by mouse (or finger) and by keyboard,
    and check the drawing after every move.

    By pointer, each slider goes to the step two thirds of the way round from where
    it is. By keyboard, it is reached with Tab, then ArrowRight moves it one step,
    End to its last, Home to its first. Returns the problems found and, per
    figure, what was measured (for the report). Screenshots before and after
    each pointer move go to ``screenshots``, if given.
    """
    problems, measured = [], {}
    for figure_id in figure_ids(page):
        locator = page.locator(f'[data-explorable="{figure_id}"]')
        before = read(page, figure_id)
        check = CHECKS[before["meta"]["figure"]]
        problems += [f"{figure_id} {tag} as first drawn: {p}" for p in check(before)]
        for index, slider in enumerate(before["sliders"]):
            problems += [f"{figure_id} {tag} slider {index} as first drawn: {p}" for p in _announced(before, index)]
            steps = slider["steps"]
            name = f"{figure_id} {tag} slider {index}"
            target = (slider["active"] + max(1, (2 * steps) // 3)) % steps
            if screenshots:
                locator.screenshot(path=str(screenshots / f"{figure_id}-{tag}-slider{index}-before.png"))
            geometry = move_by_pointer(page, figure_id, index, target, steps, slider["active"], touch)
            after = read(page, figure_id)
            if screenshots:
                locator.screenshot(path=str(screenshots / f"{figure_id}-{tag}-slider{index}-after.png"))
            problems += _after_move(f"{name} ({'finger' if touch else 'mouse'})", before, after, index, target, check)
            if geometry["box"][3] < 44:
                problems.append(f"{name}: the slider a finger holds is {geometry['box'][3]:.0f} px tall, under 44")
            if geometry["label"] < 12:
                problems.append(f"{name}: slider text of {geometry['label']} px, under 12")
            moved = {"from": slider["label"], "to": after["sliders"][index]["label"],
                     "height_px": round(geometry["box"][3])}
            before = after
            # The keyboard: one step on, then the last step, then the first.
            at = after["sliders"][index]["active"]
            for keys, goal in ((["ArrowRight"], at + 1 if at + 1 < steps else at - 1), (["End"], steps - 1),
                               (["Home"], 0)):
                keys = keys if keys != ["ArrowRight"] or at + 1 < steps else ["ArrowLeft"]
                problems += [f"{name} (keyboard): {p}" for p in move_by_keyboard(page, figure_id, index, keys)]
                after = read(page, figure_id)
                if goal != before["sliders"][index]["active"]:
                    problems += _after_move(f"{name} (keyboard {'+'.join(keys)})", before, after, index, goal, check)
                before = after
            moved["keyboard"] = [before["sliders"][index]["label"]]
            measured[f"{figure_id} slider {index}"] = moved
    return problems, measured
