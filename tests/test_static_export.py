"""The explorers' pictures for the offline site: the JSON's shape, pictures that match their
settings, the bound on their number, and explorers put back as they were."""

import base64
import gc
import html
import json
import random
import re
import weakref

import numpy as np
import pytest
import torch

from course_lib.widgets import (
    AttentionExample,
    AttentionExplorer,
    DeepStackExplorer,
    PEExplorer,
    SequenceCostExplorer,
    VectorExplorer,
    describe_vectors,
    export_explorers,
    lesson3_examples,
    sequence_cost,
)
from course_lib.widgets.static_export import (
    TYPES,
    forget_explorers,
    register,
    registered,
    slider_steps,
    static_states,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(autouse=True)
def empty_registry():
    forget_explorers()
    yield
    forget_explorers()


@pytest.fixture
def fake_timing(monkeypatch):
    """Lesson 1's explorer without real timing: LSTM linear in n, attention quadratic."""

    def measure(kind, n, d):
        return (n * 1e-5 if kind == "lstm" else n * n * 4e-8) * d / 64

    def grid(points, **_):
        return {p: [measure(*p), 1.1 * measure(*p)] for p in points}

    monkeypatch.setattr(sequence_cost, "measure_grid", grid)


def _settings(explorer) -> dict:
    return {c.name: c.get() for c in explorer._static_controls()}


def _shown(explorer) -> tuple[str, str]:
    data = explorer.output.outputs[0]["data"]
    return data["image/png"], data["text/plain"]


def _set(explorer, values: dict) -> None:
    """Set the controls to a state's values, in order, as a learner would."""
    for control in explorer._static_controls():
        if control.get() != values[control.name] and control.enabled():
            control.set(values[control.name])


def test_the_json_file_holds_every_displayed_explorer_in_the_documented_shape(
    tmp_path, fake_timing
):
    explorers = [
        AttentionExplorer(lesson3_examples(), save_dir=tmp_path),
        PEExplorer(save_dir=tmp_path),
        VectorExplorer(),
        DeepStackExplorer(depth=4),
        SequenceCostExplorer(n=64, d=32),
    ]
    for explorer in explorers:
        register(explorer)
    path = tmp_path / "explorers.json"
    assert export_explorers(path, max_images=12) == len(explorers)
    exported = json.loads(path.read_text(encoding="utf-8"))
    assert list(exported) == [e.widget.model_id for e in explorers]
    for explorer in explorers:
        entry = exported[explorer.widget.model_id]
        assert set(entry) == {"title", "controls", "states", "default", "note"}
        assert entry["title"] == explorer.title and isinstance(entry["note"], str)
        names = [c["name"] for c in entry["controls"]]
        assert len(set(names)) == len(names)
        for control in entry["controls"]:
            assert set(control) == {"name", "label", "type", "options"} and control["type"] in TYPES
            assert control["label"].strip() and control["options"]
            values = [json.dumps(o["value"]) for o in control["options"]]
            assert len(set(values)) == len(values)
            assert all(isinstance(o["label"], str) and o["label"] for o in control["options"])
            if control["type"] == "checkbox":
                assert [o["value"] for o in control["options"]] == [False, True]
        assert 1 <= len(entry["states"]) <= 12 and 0 <= entry["default"] < len(entry["states"])
        for state in entry["states"]:
            assert set(state) == {"values", "png", "alt"} and state["alt"].strip()
            assert base64.b64decode(state["png"]).startswith(PNG_MAGIC)
            assert set(state["values"]) == set(names)
            for control in entry["controls"]:  # every value held is among the options
                offered = [o["value"] for o in control["options"]]
                assert state["values"][control["name"]] in offered, (
                    explorer.title,
                    control["name"],
                )
        settings = [json.dumps(s["values"], sort_keys=True) for s in entry["states"]]
        assert len(set(settings)) == len(settings)


@pytest.mark.parametrize("make", [VectorExplorer, lambda: DeepStackExplorer(depth=12)])
def test_setting_the_controls_to_a_states_values_shows_that_states_picture(make):
    explorer = make()
    exported = static_states(explorer)
    assert len(exported["states"]) > 5
    for state in reversed(exported["states"]):
        _set(explorer, state["values"])
        assert _settings(explorer) == state["values"]
        assert _shown(explorer) == (state["png"], state["alt"])


def test_attention_states_hold_the_values_the_controls_were_fitted_to(tmp_path):
    explorer = AttentionExplorer(lesson3_examples(), save_dir=tmp_path)
    exported = static_states(explorer)
    held = [s["values"] for s in exported["states"]]
    # The head buttons exist for the two-headed example only; every other one shows head 1,
    # and the cross-attention example (6 queries, 5 keys) never has the causal mask on.
    assert {(v["example"], v["head"]) for v in held} == {(0, 0), (1, 0), (2, 0), (2, 1), (3, 0)}
    assert not any(v["example"] == 3 and v["causal"] for v in held)
    for state in exported["states"][::5]:
        _set(explorer, state["values"])
        assert _shown(explorer) == (state["png"], state["alt"])
    temperature = next(c for c in exported["controls"] if c["name"] == "temperature")
    assert temperature["type"] == "slider" and len(temperature["options"]) == 7
    assert [o["label"] for o in temperature["options"]][:3] == ["0.10", "0.25", "0.50"]


def _listed_waves(explorer) -> str:
    """The wave list as the explorer shows it, one "; " between waves."""
    items = re.findall(r"<li>(.*?)</li>", explorer.wave_list.value)
    return "; ".join(html.unescape(item) for item in items)


def test_the_pe_waves_are_fixed_and_record_what_a_smaller_d_model_keeps(tmp_path):
    explorer = PEExplorer(save_dir=tmp_path)
    exported = static_states(explorer)
    waves = next(c for c in exported["controls"] if c["name"] == "waves")
    assert waves["type"] == "fixed"
    assert waves["options"][0]["value"] == "0 sin, λ = 6.28; 8 sin, λ = 19.9; 20 sin, λ = 112"
    assert "adding or removing waves" in exported["note"]
    assert "too small for some of them draws only the dimensions below it" in exported["note"]
    by_d_model = {s["values"]["d_model"]: s["values"]["waves"] for s in exported["states"]}
    assert by_d_model[8] == "0 sin, λ = 6.28"
    assert by_d_model[16] == "0 sin, λ = 6.28; 8 sin, λ = 628"
    assert len(set(by_d_model.values())) == len(by_d_model) == 7  # each d_model its wavelengths
    clamped = [s for s in exported["states"] if s["values"]["positions"] == 10]
    assert [s["values"]["position"] for s in clamped] == [9]  # 10 positions end at 9
    position = next(c for c in exported["controls"] if c["name"] == "position")
    assert 9 in [o["value"] for o in position["options"]]
    for state in clamped + exported["states"][1:3]:
        _set(explorer, state["values"])
        assert _shown(explorer)[1] == state["alt"]


def test_each_pe_states_waves_label_is_the_wave_list_drawn_with_it(tmp_path):
    explorer = PEExplorer(dims=(0, 8, 20, 31), save_dir=tmp_path)
    exported = static_states(explorer)
    waves = next(c for c in exported["controls"] if c["name"] == "waves")
    label = {o["value"]: o["label"] for o in waves["options"]}
    for state in exported["states"]:
        shown = label[state["values"]["waves"]]
        for wave in shown.split("; "):  # "8 sin, λ = 628": named so in the picture's alt too
            dim, rest = wave.split(" ", 1)
            assert f"dimension {dim} ({rest})" in state["alt"], (wave, state["values"])
        _set(explorer, state["values"])
        assert shown == _listed_waves(explorer), state["values"]
        assert _shown(explorer)[1] == state["alt"]


def test_combinations_of_buttons_and_checkboxes_are_drawn_while_they_fit(tmp_path):
    explorer = DeepStackExplorer(depth=12)
    held = [s["values"] for s in static_states(explorer)["states"]]
    assert {(v["residual"], v["norm"]) for v in held} == {
        (r, n) for r in (True, False) for n in ("none", "post", "pre")
    }
    depths = sorted(v["depth"] for v in held if v["residual"] and v["norm"] == "post")
    assert depths == [1, 6, 12, 24, 36, 48]  # the slider alone, from the starting settings
    few = [s["values"] for s in static_states(explorer, max_images=8)["states"]]
    assert len(few) == 8 and few[0] == {"depth": 12, "residual": True, "norm": "post"}


@pytest.mark.parametrize("max_images", [1, 3, 48])
def test_never_more_pictures_than_max_images(max_images, tmp_path):
    explorer = AttentionExplorer(lesson3_examples(), save_dir=tmp_path)
    states = static_states(explorer, max_images=max_images)["states"]
    assert len(states) == min(max_images, 24)
    assert states[0]["values"] == {
        "example": 0,
        "head": 0,
        "temperature": 1.0,
        "scale": True,
        "causal": False,
    }


@pytest.mark.parametrize(
    "max_images, error", [(0, ValueError), (-3, ValueError), (2.0, TypeError), (True, TypeError)]
)
def test_a_bad_max_images_is_named(max_images, error, tmp_path):
    register(VectorExplorer())
    with pytest.raises(error, match="max_images"):
        export_explorers(tmp_path / "x.json", max_images=max_images)
    assert not (tmp_path / "x.json").exists()


def test_exporting_puts_every_explorer_back_and_leaves_the_random_state_alone(
    tmp_path, fake_timing
):
    attention = AttentionExplorer(lesson3_examples(), save_dir=tmp_path)
    attention.example_select.value, attention.head_select.value = 2, 1
    attention.temperature.value, attention.causal.value = 0.5, True
    pe = PEExplorer(save_dir=tmp_path)
    pe.set_waves((1, 5))
    pe.max_len.value, pe.position.value = 40, 33
    explorers = [
        attention,
        pe,
        VectorExplorer(),
        DeepStackExplorer(depth=7),
        SequenceCostExplorer(n=32, d=64),
    ]
    before = [(_settings(e), _shown(e)) for e in explorers]
    for explorer in explorers:
        register(explorer)
    torch.manual_seed(5), random.seed(5), np.random.seed(5)
    rng = torch.get_rng_state(), random.getstate(), np.random.get_state()[1].copy()
    export_explorers(tmp_path / "explorers.json", max_images=16)
    assert torch.equal(torch.get_rng_state(), rng[0]) and random.getstate() == rng[1]
    assert np.array_equal(np.random.get_state()[1], rng[2])
    assert [(_settings(e), _shown(e)) for e in explorers] == before
    assert pe.waves == (1, 5) and attention.example_select.value == 2


def test_the_default_is_the_state_the_explorer_was_displayed_in():
    explorer = VectorExplorer()
    register(explorer)  # as displaying it does
    shown = _settings(explorer)
    explorer.angle_b.value = 90.0  # moved afterwards
    exported = static_states(explorer)
    assert exported["states"][exported["default"]]["values"] == shown
    assert exported["states"][exported["default"]]["alt"].startswith("Two arrows from the origin")


def test_an_explorer_moved_after_display_is_varied_around_its_displayed_settings():
    explorer = VectorExplorer()
    explorer.angle_b.value = 37.0  # not one of the slider's steps
    register(explorer)  # as displaying it does
    shown, picture = _settings(explorer), _shown(explorer)
    explorer.angle_a.value, explorer.length_b.value = 45.0, 1.3  # moved afterwards
    moved = _settings(explorer)
    (only,) = static_states(explorer, max_images=1)["states"]
    assert (only["values"], (only["png"], only["alt"])) == (shown, picture)
    exported = static_states(explorer)
    default = exported["states"][exported["default"]]
    assert (default["values"], (default["png"], default["alt"])) == (shown, picture)
    assert moved in [s["values"] for s in exported["states"]]  # drawn too
    held = {json.dumps(s["values"], sort_keys=True): s for s in exported["states"]}
    for control in exported["controls"]:  # every single change from the default is drawn
        for option in control["options"]:
            changed = {**shown, control["name"]: option["value"]}
            state = held[json.dumps(changed, sort_keys=True)]
            _set(explorer, changed)
            assert _shown(explorer) == (state["png"], state["alt"])


def test_lesson_1_measures_each_setting_and_says_the_times_are_the_builders(fake_timing):
    explorer = SequenceCostExplorer(n=256, d=128)
    exported = static_states(explorer)
    assert [c["name"] for c in exported["controls"]] == ["n", "d"]
    assert len(exported["states"]) == 1 + 6 + 3  # n over its 7 values, d over its 4
    assert "measured on the computer that built this page" in exported["note"]
    for state in exported["states"]:
        n, d = state["values"]["n"], state["values"]["d"]
        assert f"Measured at n = {n:,}, d = {d}, batch 1: LSTM" in state["alt"]


def test_faceted_examples_export_one_control_per_part(tmp_path):
    examples = [
        AttentionExample(f"{s} · {k} · layer 1", "a b", "a b", torch.randn(2, 2, 2), 1)
        for s in ("first sentence", "second sentence")
        for k in ("encoder", "cross")
    ]
    explorer = AttentionExplorer(
        examples, facets=("sentence", "attention", "layer"), save_dir=tmp_path
    )
    exported = static_states(explorer, max_images=24)
    assert [c["name"] for c in exported["controls"]] == [
        "sentence",
        "attention",
        "head",
        "temperature",
        "causal",
    ]
    sentence = exported["controls"][0]
    assert [o["label"] for o in sentence["options"]] == ["first sentence", "second sentence"]
    assert {(s["values"]["sentence"], s["values"]["attention"]) for s in exported["states"]} == {
        (s, k) for s in ("first sentence", "second sentence") for k in ("encoder", "cross")
    }


def test_the_registry_keeps_no_explorer_alive():
    kept, dropped = VectorExplorer(), VectorExplorer()
    register(kept), register(dropped)
    assert registered() == [kept, dropped]
    gone = weakref.ref(dropped)
    parts = [dropped.widget]
    while parts:  # close every widget of it: ipywidgets keeps open ones alive
        part = parts.pop()
        parts += getattr(part, "children", ())
        part.close()
    del dropped, part
    gc.collect()
    assert gone() is None and registered() == [kept]


def test_registering_keeps_each_explorer_once_and_skips_closed_ones(tmp_path):
    kept, closed = VectorExplorer(), VectorExplorer()
    for explorer in (kept, kept, closed):
        register(explorer)
    assert registered() == [kept, closed]
    closed.widget.close()
    assert export_explorers(tmp_path / "x.json") == 1
    assert list(json.loads((tmp_path / "x.json").read_text())) == [kept.widget.model_id]


def test_slider_steps_spread_evenly_and_keep_the_current_value():
    assert slider_steps(0, 99, 10) == [0, 10, 25, 50, 74, 99]
    assert slider_steps(0.1, 10.0, 1.0, log=True) == [0.1, 0.32, 1.0, 3.16, 10.0]


def test_the_alt_text_of_each_state_is_computed_from_its_settings():
    explorer = VectorExplorer()
    for state in static_states(explorer)["states"]:
        v = state["values"]
        from course_lib.widgets import vector_pair

        pair = vector_pair(v["angle_a"], v["length_a"], v["angle_b"], v["length_b"])
        assert state["alt"] == describe_vectors(pair)
