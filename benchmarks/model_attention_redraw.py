"""Redraw time of lesson 7's attention explorer: a trained translator's maps, every layer.

Setting: as lesson 7 builds it, with the shipped checkpoint (``load_pretrained()``): the
maps of three sentences, each with encoder self-attention, decoder self-attention and
cross-attention for each layer of the model (4 heads each), the explorer opened on the first
sentence's cross-attention in the last layer. Each redraw is the explorer's ``update()``,
fired by setting a control's value: weights, figure, PNG, into the ``Output`` widget
(outside a notebook nothing is shown, the work is the same). Four cases, each after 5 warm-up steps:

- example buttons, a map not shown before: the sentence, attention and layer buttons step
  through all the maps, more than the 8 the explorer keeps drawn, so every step lays the
  figure out and draws it in full;
- head buttons: the four heads in turn, redrawn in place;
- temperature slider;
- causal mask, on and off, on the encoder's self-attention.

Goal: a redraw well under 150 ms, read as median <= 100 ms and slowest <= 150 ms.

    python benchmarks/model_attention_redraw.py [--repeats 30] [--checkpoint PATH]
"""

import argparse

import torch
from _redraw import report, timed

from course_lib.pretrained import CHECKPOINT, load_pretrained
from course_lib.widgets import AttentionExplorer, model_examples
from course_lib.widgets.model_examples import FACETS

SENTENCES = [  # lesson 7's
    "i eat the red apple",
    "my sister does not like the green cars",
    "they buy a blue hat and a white dress",
]


def last_map(examples, start: str) -> int:
    """Index of the last example whose name starts with ``start`` (the last layer's map)."""
    return max(i for i, e in enumerate(examples) if e.name.startswith(start))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--checkpoint", default=CHECKPOINT, help="default: the shipped one")
    args = parser.parse_args()
    torch.set_num_threads(1)  # as notebook.start() sets it in the lessons
    translator = load_pretrained(args.checkpoint)
    examples = model_examples(
        translator.model, SENTENCES, translator.src_vocab, translator.tgt_vocab
    )
    opened = last_map(examples, f"{SENTENCES[0]} · cross-attention")  # as the lesson opens it
    encoder = last_map(examples, f"{SENTENCES[1]} · encoder self-attention")
    explorer = AttentionExplorer(examples, facets=FACETS, example=opened, save_dir="/tmp")
    order = [*range(0, len(examples), 2), *range(1, len(examples), 2)]  # all, scattered
    temperatures = [10 ** (-1 + 2 * i / 9) for i in range(10)]

    def example_step(i):
        explorer.example_index = order[i % len(order)]

    def head_step(i):
        explorer.head_select.value = i % explorer.examples[0].n_heads

    def temperature_step(i):
        explorer.temperature.value = temperatures[i % len(temperatures)]

    def causal_step(i):
        explorer.causal.value = not explorer.causal.value

    sizes = sorted({tuple(e.scores.shape[1:]) for e in examples})
    print(
        f"AttentionExplorer on lesson 7's model: {len(examples)} maps of {examples[0].n_heads} "
        f"heads, sizes {sizes[0]} to {sizes[-1]}, {torch.get_num_threads()} torch thread, "
        f"{args.repeats} redraws after 5 warm-up"
    )
    report("example buttons, a map not shown before", timed(example_step, args.repeats), 40)
    explorer.example_index = opened
    report("head buttons", timed(head_step, args.repeats), 40)
    report("temperature slider", timed(temperature_step, args.repeats), 40)
    explorer.example_index = encoder
    explorer.temperature.value = 1.0
    report("causal mask on and off", timed(causal_step, args.repeats), 40)


if __name__ == "__main__":
    main()
