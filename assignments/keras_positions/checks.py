"""Grading spec of Assignment 3, read by the grader only (never by the sandbox).

The layer is judged on hidden inputs; the model on its structure; the
experiment on the student's trained models, tested on fresh data.
"""

from classroom.expect import close, rule

LIBRARY = True
#: The reference of the hidden checks: students may not use it.
FORBIDDEN = ("pe_lib.layers",)
SECONDS = 60.0
#: Memory of the sandbox (its processes and files): TensorFlow and two small models.
MEMORY_GIB = 2.0
#: Address space of one process: TensorFlow maps far more than it uses.
ADDRESS_GIB = 12.0

_LAYER = """import numpy, keras
inputs = numpy.random.default_rng(3).normal(size=(3, 7, 8)).astype("float32")
layer = SinusoidalPositions(max_length=12)
answer = keras.ops.convert_to_numpy(layer(inputs))"""
_PARAMS = """import numpy
layer = SinusoidalPositions(max_length=12)
layer(numpy.zeros((1, 7, 8), dtype="float32"))
answer = int(layer.count_params())"""
_FULL = """import numpy, keras
answer = keras.ops.convert_to_numpy(
    SinusoidalPositions(max_length=5)(numpy.zeros((1, 5, 4), dtype="float32")))"""
_TOO_LONG = """import numpy
try:
    SinusoidalPositions(max_length=5)(numpy.zeros((1, 6, 4), dtype="float32"))
    answer = "no error"
except ValueError:
    answer = "ValueError"
except Exception as error:
    answer = type(error).__name__"""
_MODEL = """import numpy
with_positions, without_positions = make_classifier(True), make_classifier(False)
answer = (tuple(int(n) for n in with_positions(numpy.ones((3, 8), dtype="int32")).shape),
          any(isinstance(layer, SinusoidalPositions) for layer in with_positions.layers),
          any(isinstance(layer, SinusoidalPositions) for layer in without_positions.layers),
          int(with_positions.count_params()) == int(without_positions.count_params()) > 0)"""
_FRESH = """import numpy, keras
from pe_lib.course.order.tasks import marker_order_task
tokens, labels = marker_order_task(250, 8, seed=11)
def logits(model):
    return keras.ops.convert_to_numpy(model(tokens, training=False))[:, 0]
seen, blind = logits(model_with), logits(model_without)
answer = (int(model_with.optimizer.iterations) > 0 and int(model_without.optimizer.iterations) > 0,
          float(numpy.mean((seen > 0) == (labels == 1))),
          bool(numpy.allclose(blind[0::2], blind[1::2], rtol=1e-4, atol=1e-5)))"""

PROBES = {"layer": _LAYER, "params": _PARAMS, "full": _FULL, "too_long": _TOO_LONG, "model": _MODEL,
          "accuracy_with": "accuracy_with", "accuracy_without": "accuracy_without", "fresh": _FRESH}


def _item(answers, probe, index):
    value = answers.get(probe)
    return value[index] if isinstance(value, tuple) and len(value) > index else None


_LAYER_CHECK = close("layer", "SinusoidalPositions on (3, 7, 8) inputs", weight=2.0, rtol=1e-5, atol=1e-5)


def no_weights(answers, references):
    if _LAYER_CHECK.judge(answers, references):
        return "counts only once the layer adds the encoding"
    return "" if answers.get("params") == 0 else "the layer has trainable weights"


def _flag(probe, index, message):
    return lambda answers, references: "" if _item(answers, probe, index) is True else message


def _accuracy_at_least(probe, floor, index=None):
    def judge(answers, references):
        value = answers.get(probe) if index is None else _item(answers, probe, index)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return "no accuracy to check"
        return "" if value >= floor else f"is below {floor}"
    return judge


def _near_half(answers, references):
    value = answers.get("accuracy_without")
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return "no accuracy to check"
    return "" if abs(value - 0.5) <= 0.01 else "is not within 0.01 of one half"


QUESTIONS = {
    "q1": [_LAYER_CHECK,
           close("full", "SinusoidalPositions at max_length", rtol=1e-5, atol=1e-6),
           rule("input longer than max_length", 1.0,
                lambda a, r: "" if a.get("too_long") == "ValueError" else "raises no ValueError"),
           rule("no trainable weights", 1.0, no_weights)],
    "q2": [rule("make_classifier(True) output shape", 1.0,
                lambda a, r: "" if _item(a, "model", 0) == (3, 1) else "is not (3, 1)"),
           rule("make_classifier(True) uses SinusoidalPositions", 1.0, _flag("model", 1, "it does not")),
           rule("make_classifier(False) has no SinusoidalPositions", 1.0,
                lambda a, r: "" if _item(a, "model", 2) is False else "it has one, or no model"),
           rule("both models have the same weights", 1.0, _flag("model", 3, "they differ"))],
    "q3": [rule("accuracy_with", 1.0, _accuracy_at_least("accuracy_with", 0.7)),
           rule("accuracy_without", 1.0, _near_half),
           rule("model_with on fresh data", 1.0, _accuracy_at_least("fresh", 0.7, index=1)),
           rule("model_without answers mirror pairs alike", 1.0, _flag("fresh", 2, "it does not"))],
}
