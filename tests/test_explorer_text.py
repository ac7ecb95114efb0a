"""What each explorer prints in its picture, its text alternative and its status line agree, in
every state the offline site draws; and an explorer refuses a setting its example cannot take.

The picture's printed texts are its titles, footers, legends and the numbers written beside
bars (not the tick labels, nor the numbers in a heatmap's cells, which the text alternative
sums up as each row's largest weight). Every number they print must appear, formatted the
same way, in the text alternative and in the status line.
"""

import html
import re

import pytest
import torch

from course_lib.masks import causal_mask
from course_lib.widgets import (
    AttentionExample,
    AttentionExplorer,
    DeepStackExplorer,
    PEExplorer,
    SequenceCostExplorer,
    VectorExplorer,
    lesson3_examples,
    sequence_cost,
)
from course_lib.widgets.attention_data import is_causal
from course_lib.widgets.static_export import static_states

# A number as printed: 7, 1,024, -0.54, 0.87, 3.7e-08, 1e-8; not the 2 of "d_model/2" or the
# k of "d_k" (a digit right after a letter, "_", "/" or "." is part of a name or a number).
NUMBER = re.compile(r"(?<![\w/.])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:e[-+]\d+)?(?!\d)")


def numbers(text: str) -> set[str]:
    return set(NUMBER.findall(text))


def printed(fig) -> list[str]:
    """The texts a figure prints: figure texts, titles, axes texts and legend entries."""
    texts = [t.get_text() for t in fig.texts]
    for ax in fig.axes:
        texts += [ax.get_title(), *(t.get_text() for t in ax.texts)]
        if ax.get_legend() is not None:
            texts += [t.get_text() for t in ax.get_legend().get_texts()]
    return [t for t in texts if t.strip()]


def figure_of(explorer):
    return explorer.picture.figure if isinstance(explorer, PEExplorer) else explorer.figure


def status_text(explorer) -> str:
    """The explorer's status lines as a screen reader reads them (tags gone)."""
    lines = [getattr(explorer, name, None) for name in ("status", "readout_label", "wave_list")]
    markup = " ".join(line.value for line in lines if line is not None)
    return html.unescape(re.sub(r"<[^>]+>", " ", markup))


def alt_text(explorer) -> str:
    data = explorer.output.outputs[0]["data"]
    assert data["text/plain"] == explorer.text or data["text/plain"] == explorer.alt
    return data["text/plain"]


def set_state(explorer, values: dict) -> None:
    """Set the controls to a state's values, in order, as a learner would."""
    for control in explorer._static_controls():
        if control.get() != values[control.name] and control.enabled():
            control.set(values[control.name])


def assert_agree(explorer, state) -> None:
    alt, status = alt_text(explorer), status_text(explorer)
    assert alt == state["alt"]
    missing_alt, missing_status = set(), set()
    for line in printed(figure_of(explorer)):
        missing_alt |= {f"{n} (in {line!r})" for n in numbers(line) - numbers(alt)}
        missing_status |= {f"{n} (in {line!r})" for n in numbers(line) - numbers(status)}
    assert not missing_alt, f"{state['values']}: the alt leaves out {sorted(missing_alt)}"
    assert not missing_status, f"{state['values']}: the status leaves out {sorted(missing_status)}"


def assert_mask_agrees(explorer) -> None:
    """The hatched cells, the formula the picture prints and the alt say the same mask."""
    hidden = explorer.hidden
    hatched = 0 if hidden is None else int(hidden.sum())
    parts = {a.get_gid(): a for a in explorer.figure.axes[0].patches}
    squares = len(parts["masked cells"].get_path().vertices) // 5  # 5 vertices per square
    assert squares == hatched and parts["masked cells"].get_visible() == (hatched > 0)
    formula = next(t.get_text() for t in explorer.figure.texts if t.get_gid() == "formula")
    causal = hidden is not None and is_causal(hidden)
    assert ("causal mask on" in formula) == ("causal mask on" in explorer.text) == causal
    cells = explorer.weights.numel()
    assert (f"{hatched} of the {cells} cells hatched" in explorer.text) == (hatched > 0)
    if explorer.causal.value:  # a ticked box always shows at least the causal triangle
        assert hidden is not None and bool(hidden[~causal_mask(hidden.shape[0])].all())


def walk(explorer, max_images=48, check=None):
    exported = static_states(explorer, max_images)
    assert len(exported["states"]) > 1
    for state in exported["states"]:
        set_state(explorer, state["values"])
        assert_agree(explorer, state)
        if check is not None:
            check(explorer)
    return exported


def fake_grid(points, samples=7, **_):
    """Lesson 1 without real timing: LSTM linear in n, attention quadratic, one noisy
    sample at the smallest length."""
    out = {}
    for kind, n, d in points:
        seconds = (n * 1e-5 if kind == "lstm" else n * n * 4e-8) * d / 64
        out[kind, n, d] = [seconds * (1.5 if n == 16 and i == 0 else 1) for i in range(samples)]
    return out


def test_lesson_1_timing_explorer(monkeypatch):
    monkeypatch.setattr(sequence_cost, "measure_grid", fake_grid)
    explorer = SequenceCostExplorer(n=256, d=128)
    walk(explorer)
    explorer.n_select.value = 1024
    assert "Crossing: between n = 128 and 256" in explorer.text  # (d=128: 2.6 vs 2.0 ms)
    assert "Crossing: between n = 128 and 256" in status_text(explorer)
    assert "took up to 1.5× the fastest at n = 16" in explorer.text


def test_lesson_2_vector_explorer():
    walk(VectorExplorer((0.5, 1.0), (1.1, 0.25), names=("cat", "dog")))


def test_lesson_3_attention_explorer(tmp_path):
    walk(AttentionExplorer(lesson3_examples(), save_dir=tmp_path), check=assert_mask_agrees)


def test_lesson_4_attention_explorer_on_weights_a_model_computed(tmp_path):
    symbols = list("abcdefgh")
    weights = torch.randn(2, 4, 8, 8).softmax(-1).clamp(min=1e-12)  # as lesson 4 passes them
    examples = [
        AttentionExample.from_weights("trained, one sequence", symbols, symbols, weights[0]),
        AttentionExample.from_weights("at initialisation", symbols, symbols, weights[1]),
        AttentionExample.from_qk(
            "worked example, 2 heads",
            ["word 1", "word 2"],
            torch.randn(2, 2, 2),
            torch.randn(2, 2, 2),
        ),
    ]
    walk(AttentionExplorer(examples, save_dir=tmp_path), check=assert_mask_agrees)


def test_lesson_5_positional_encoding_explorer(tmp_path):
    walk(PEExplorer(save_dir=tmp_path))


def test_lesson_6_deep_stack_explorer():
    walk(DeepStackExplorer(depth=12))


@pytest.fixture(scope="module")
def lesson7_examples():
    from course_lib.pretrained import load_pretrained
    from course_lib.widgets.model_examples import model_examples

    t = load_pretrained()
    sentences = ["i eat the red apple", "my sister does not like the green cars"]
    return model_examples(t.model, sentences, t.src_vocab, t.tgt_vocab)


def test_lesson_7_attention_explorer_on_a_trained_model(lesson7_examples, tmp_path):
    explorer = AttentionExplorer(
        lesson7_examples, facets=("sentence", "attention", "layer"), save_dir=tmp_path
    )
    exported = walk(explorer, check=assert_mask_agrees)
    kinds = {s["values"]["attention"] for s in exported["states"]}
    assert "decoder self-attention" in kinds
    for state in exported["states"]:  # the decoder's own maps: causal, said so, box ticked
        if state["values"]["attention"] == "decoder self-attention":
            assert "causal mask on" in state["alt"] and state["values"]["causal"] is True


# An explorer refuses what its example cannot take, says so, and keeps working.


def test_a_causal_mask_set_on_cross_attention_from_code_is_refused_and_explained(tmp_path):
    explorer = AttentionExplorer(lesson3_examples(), save_dir=tmp_path, example=3)  # 6 x 5
    explorer.causal.value = True  # the box is greyed out; code can still set it
    assert explorer.causal.value is False
    assert "needs one query per key; this map has 6 queries and 5 keys" in explorer.status.value
    assert "causal mask on" not in explorer.text
    explorer.temperature.value = 0.5  # every later change still works
    explorer.head_select.value = 0
    assert "τ = 0.50" in explorer.text and "needs one query" not in explorer.status.value
    explorer.example_index = 2  # a square example: the mask is the learner's choice again
    assert explorer.causal.value is False and not explorer.causal.disabled
    explorer.causal.value = True
    assert "causal mask on" in explorer.text


def test_the_learners_causal_choice_comes_back_after_an_example_that_cannot_take_it(tmp_path):
    explorer = AttentionExplorer(lesson3_examples(), save_dir=tmp_path, example=2)
    explorer.causal.value = True
    explorer.example_index = 3  # cross-attention: off and greyed out
    assert explorer.causal.value is False and explorer.causal.disabled
    explorer.example_index = 0
    assert explorer.causal.value is True and not explorer.causal.disabled
    assert "causal mask on" in explorer.text


def test_weights_a_model_masked_keep_the_mask_ticked_and_refuse_to_drop_it(tmp_path):
    T = 4
    weights = torch.tril(torch.ones(T, T)) / torch.arange(1, T + 1)[:, None]  # (T, T) causal
    decoder = AttentionExample.from_weights("decoder", list("abcd"), list("abcd"), weights)
    encoder = AttentionExample.from_weights(
        "encoder", list("abcd"), list("abcd"), torch.full((T, T), 1 / T)
    )
    explorer = AttentionExplorer([encoder, decoder], save_dir=tmp_path, example=1)
    assert explorer.causal.value is True and explorer.causal.disabled
    assert "causal mask on" in explorer.text and "6 of the 16 cells hatched" in explorer.text
    explorer.causal.value = False  # from code
    assert explorer.causal.value is True and "causal mask on" in explorer.text
    assert "computed under a causal mask" in explorer.status.value
    explorer.example_index = 0  # the learner never ticked it: the encoder shows no mask
    assert explorer.causal.value is False and "hatched" not in explorer.text
