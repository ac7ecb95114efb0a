"""Translating a sentence the learner types, with a clear message instead of a traceback.

The model only knows the words of its training corpus. A sentence with an unknown word
is still translated (the word becomes ``<unk>``), but the answer says which words were
unknown and suggests known words that are spelled alike.
"""

import difflib
from dataclasses import dataclass, field

from .data import SPECIALS, tokenize
from .evaluation import translate


@dataclass(frozen=True)
class TypedTranslation:
    """The outcome of :func:`translate_typed`; it prints as one readable message."""

    text: str  # what was typed
    translation: str | None  # None when nothing could be translated
    unknown: tuple[str, ...] = ()  # words the model never saw in training
    suggestions: dict = field(default_factory=dict)  # unknown word -> known look-alikes
    problem: str = ""  # why nothing was translated, if so

    @property
    def ok(self) -> bool:
        """True when every word was known and a translation was produced."""
        return self.translation is not None and not self.unknown

    def __str__(self) -> str:
        if self.translation is None:
            return f"{self.text!r}: {self.problem}"
        lines = [f"{self.text!r} -> {self.translation!r}"]
        for word in self.unknown:
            close = self.suggestions.get(word)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            lines.append(
                f"   unknown word {word!r}{hint}: the model never saw it and read it as <unk>"
            )
        return "\n".join(lines)

    __repr__ = __str__


def translate_typed(model, text, src_vocab, tgt_vocab, *, method: str = "greedy"):
    """Translate one typed sentence; report unknown words and bad input in the result.

    Args:
        model: a trained :class:`course_lib.model.Transformer`.
        text: an English sentence, e.g. ``"my sister likes the blue car"``.
        src_vocab, tgt_vocab: the vocabularies the model was trained with.
        method: ``"greedy"`` or ``"beam"``.

    Returns:
        A :class:`TypedTranslation`; it never raises for what a learner types.
    """
    if not isinstance(text, str):
        return TypedTranslation(
            repr(text), None, problem=f"type a sentence as a string; got {type(text).__name__}"
        )
    if not tokenize(text):
        return TypedTranslation(
            text, None, problem="there is nothing to translate: type a sentence"
        )
    known = [t for t in src_vocab.itos if t not in SPECIALS]
    unknown = tuple(src_vocab.unknown_words(text))
    suggestions = {w: difflib.get_close_matches(w, known, n=3, cutoff=0.7) for w in unknown}
    if len(unknown) == len(set(tokenize(text))):
        return TypedTranslation(
            text,
            None,
            unknown,
            suggestions,
            problem="the model knows none of these words; try e.g. 'she reads the red book'",
        )
    (translation,) = translate(model, [text], src_vocab, tgt_vocab, method=method)
    return TypedTranslation(text, translation, unknown, suggestions)
