"""A rule-generated English-to-French mini corpus, for training a translator in seconds.

Real French grammar (gender and number agreement, adjectives after the noun, elision,
ne ... pas with de/d'), a held-out test set built from word combinations that never occur
in training, generated in code and deterministic for a seed. No downloads, no files.
"""

import functools
import random
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from . import _validate
from .data import Vocab, detokenize

# ---- The grammar of the translation corpus -------------------------------------------------
# fmt: off
# French person index: 0 je, 1 tu, 2 il/elle, 3 nous, 4 vous, 5 ils/elles.
_SUBJECTS = {"i": ("je", 0), "you": ("tu", 1), "he": ("il", 2), "she": ("elle", 2),
             "we": ("nous", 3), "you all": ("vous", 4), "they": ("ils", 5),
             "the boy": ("le garçon", 2), "my sister": ("ma sœur", 2),
             "the girls": ("les filles", 5), "marie": ("marie", 2)}
# English infinitive and third person, then the six French present-tense forms.
_VERBS = {row[0]: (row[1], row[2:]) for row in map(str.split, """
    eat eats  mange manges mange mangeons mangez mangent
    see sees  vois vois voit voyons voyez voient
    like likes  aime aimes aime aimons aimez aiment
    want wants  veux veux veut voulons voulez veulent
    buy buys  achète achètes achète achetons achetez achètent
    take takes  prends prends prend prenons prenez prennent
    read reads  lis lis lit lisons lisez lisent
    find finds  trouve trouves trouve trouvons trouvez trouvent
    have has  ai as a avons avez ont
    carry carries  porte portes porte portons portez portent
    draw draws  dessine dessines dessine dessinons dessinez dessinent
    wash washes  lave laves lave lavons lavez lavent
    prefer prefers  préfère préfères préfère préférons préférez préfèrent
    choose chooses  choisis choisis choisit choisissons choisissez choisissent
    sell sells  vends vends vend vendons vendez vendent
    open opens  ouvre ouvres ouvre ouvrons ouvrez ouvrent
    hold holds  tiens tiens tient tenons tenez tiennent""".strip().splitlines())}
_NOUNS = {en: (fr, gender) for en, fr, gender in map(str.split, """
    apple pomme f, car voiture f, book livre m, cake gâteau m, chair chaise f, hat chapeau m,
    shirt chemise f, dress robe f, ball ballon m, cup tasse f, bottle bouteille f, flower fleur f,
    letter lettre f, bag sac m, box boîte f, orange orange f, umbrella parapluie m, egg œuf m,
    key clé f, bike vélo m, shoe chaussure f, bird oiseau m""".strip().split(","))}
# Only adjectives that follow the noun in French (so no petit, grand, beau, nouveau...).
_ADJECTIVES = {en: (m, f) for en, m, f in map(str.split, """
    red rouge rouge, green vert verte, blue bleu bleue, black noir noire, white blanc blanche,
    yellow jaune jaune, grey gris grise, round rond ronde, broken cassé cassée, dirty sale sale,
    expensive cher chère, french français française""".strip().split(","))}
# Most verbs take any object; these would make nonsense ("i eat the book") without a list.
_OBJECTS = {"eat": ["apple", "cake", "egg", "orange"], "read": ["book", "letter"],
            "open": ["bag", "book", "bottle", "box", "car", "letter", "umbrella"]}
# French forms: masculine singular, feminine singular, plural. "a" becomes "some" in the plural.
_DETERMINERS = {"the": ("le", "la", "les"), "a": ("un", "une", "des"), "my": ("mon", "ma", "mes"),
                "his": ("son", "sa", "ses"), "her": ("son", "sa", "ses"),
                "our": ("notre", "notre", "nos"), "their": ("leur", "leur", "leurs")}
# Before a vowel French drops the final vowel of these short words, and ma/sa become mon/son.
_BEFORE_VOWEL_FR = {"je": "j'", "ne": "n'", "de": "d'", "le": "l'", "la": "l'", "ma": "mon",
                    "sa": "son"}
# fmt: on


class NounPhrase(NamedTuple):
    """One object of a sentence: ``NounPhrase("apple", "red")`` is "the red apple"."""

    noun: str
    adjective: str | None = None
    determiner: str = "the"  # the, a, my, his, her, our, their
    plural: bool = False


def sentence_pair(
    subject: str, verb: str, *objects: NounPhrase, negated: bool = False, period: bool = False
) -> tuple[str, str]:
    """Build one (english, french) pair; every sentence of the corpus is made this way.

    Args:
        subject: e.g. "i", "you all", "my sister".
        verb: an English infinitive, e.g. "eat".
        objects: one ``NounPhrase``, or two joined by "and" / "et" (not with ``negated``).
        negated: "does not" / "ne ... pas".
        period: end both sides with ".".
    Returns:
        e.g. ``("i eat the red apple", "je mange la pomme rouge")``.
    """
    _check("subject", subject, _SUBJECTS)
    _check("verb", verb, _VERBS)
    if not 1 <= len(objects) <= (1 if negated else 2):
        raise ValueError(
            f"objects must be 1 noun phrase, or 2 without negation; got {len(objects)}"
        )
    fr_subject, person = _SUBJECTS[subject]
    third_person, fr_forms = _VERBS[verb]
    en, fr = subject.split(), fr_subject.split()
    if negated:
        en += ["does" if person == 2 else "do", "not", verb]
        fr += ["ne", fr_forms[person], "pas"]
    else:
        en.append(third_person if person == 2 else verb)
        fr.append(fr_forms[person])
    for i, phrase in enumerate(objects):
        en_words, fr_words = _noun_phrase(NounPhrase(*phrase), negated)
        en += ["and", *en_words] if i else en_words
        fr += ["et", *fr_words] if i else fr_words
    if period:
        en.append(".")
        fr.append(".")
    return _elide(en, "aeiou", {"a": "an"}), _elide(fr, "aeiouéèêâîôœ", _BEFORE_VOWEL_FR)


def _noun_phrase(phrase: NounPhrase, negated: bool) -> tuple[list[str], list[str]]:
    noun, adjective, determiner, plural = phrase
    _check("noun", noun, _NOUNS)
    _check("determiner", determiner, _DETERMINERS)
    if adjective is not None:
        _check("adjective", adjective, _ADJECTIVES)
    fr_noun, gender = _NOUNS[noun]
    en = [determiner, *([adjective] if adjective else []), _en_plural(noun) if plural else noun]
    form = 2 if plural else 1 if gender == "f" else 0
    fr = [_DETERMINERS[determiner][form], fr_noun]
    if determiner == "a":
        if plural:
            en[0] = "any" if negated else "some"
        if negated:
            fr[0] = "de"  # un/une/des become de after a negation: "pas de pomme"
    if adjective:
        fr.append(_ADJECTIVES[adjective][1 if gender == "f" else 0])
    if plural:
        fr[1:] = [_fr_plural(word) for word in fr[1:]]
    return en, fr


def _elide(words: list[str], vowels: str, before_vowel: dict[str, str]) -> str:
    """Apply a/an, j', l', d', n', mon: each depends only on the first letter of the next word."""
    for i in range(len(words) - 1):
        if words[i] in before_vowel and words[i + 1][0] in vowels:
            words[i] = before_vowel[words[i]]
    return detokenize(words)


def _en_plural(word: str) -> str:
    return word + ("es" if word.endswith(("s", "x", "sh", "ch")) else "s")


def _fr_plural(word: str) -> str:
    if word.endswith(("s", "x")):
        return word  # gris, français
    return word + ("x" if word.endswith("eau") else "s")  # gâteaux, chapeaux, oiseaux


def _check(name: str, value, allowed: dict) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {sorted(allowed)}; got {value!r}")


# ---- The corpus -----------------------------------------------------------------------------
_HOLDOUTS = ("triple", "noun_adjective")
# Never held out, so that the lessons' "i eat the red apple" is a sentence like those in training.
_LESSON_COMBINATION = ("eat", "apple", "red")


@dataclass(repr=False)
class Corpus:
    """English-to-French sentence pairs, with vocabularies built from the training half only."""

    train: list[tuple[str, str]]  # (english, french), all different
    test: list[tuple[str, str]]  # held out: each uses a combination that training never shows
    src_vocab: Vocab  # English
    tgt_vocab: Vocab  # French

    def encode(self, pairs: Iterable[tuple[str, str]]) -> list[tuple[list[int], list[int]]]:
        """``(src_ids, tgt_ids)`` for each ``(english, french)`` pair, ready for ``collate``."""
        return [(self.src_vocab.encode(en), self.tgt_vocab.encode(fr)) for en, fr in pairs]

    @functools.cached_property
    def train_ids(self) -> list[tuple[list[int], list[int]]]:
        return self.encode(self.train)

    @functools.cached_property
    def test_ids(self) -> list[tuple[list[int], list[int]]]:
        return self.encode(self.test)

    def __repr__(self) -> str:
        return (
            f"Corpus(train={len(self.train)} pairs, test={len(self.test)} pairs, "
            f"src_vocab={len(self.src_vocab)} tokens, tgt_vocab={len(self.tgt_vocab)} tokens)"
        )


def translation_corpus(
    n_train: int = 50_000, n_test: int = 1_000, *, seed: int = 0, holdout: str = "triple"
) -> Corpus:
    """Generate the English-to-French corpus (see ``sentence_pair`` for the grammar).

    Args:
        n_train, n_test: number of (unique, disjoint) sentence pairs in each split.
        seed: the same seed gives the same corpus.
        holdout: what the test set measures. "triple": every test sentence uses a (verb, noun,
            adjective) combination absent from training; "noun_adjective": a (noun, adjective)
            pair absent from training (harder). Every test word still occurs in training.
    Returns:
        a ``Corpus``.
    """
    _validate.positive_int("n_train", n_train)
    _validate.positive_int("n_test", n_test)
    if holdout not in _HOLDOUTS:
        raise ValueError(f"holdout must be one of {_HOLDOUTS}; got {holdout!r}")
    rng = random.Random(seed)
    width = 3 if holdout == "triple" else 2  # keys are (verb, noun, adjective)[-width:]
    keys = [(v, n, a) for v in _VERBS for n in _OBJECTS.get(v, _NOUNS) for a in _ADJECTIVES]
    # Sorted, because set order changes between runs (string hashing is randomised).
    candidates = sorted({key[-width:] for key in keys} - {_LESSON_COMBINATION[-width:]})
    held_out = rng.sample(candidates, len(candidates) // 10)
    held_set = set(held_out)

    def train_pair():
        subject, verb, objects, negated, period = _random_parts(rng)
        if any((verb, o.noun, o.adjective)[-width:] in held_set for o in objects):
            return None
        return sentence_pair(subject, verb, *objects, negated=negated, period=period)

    def test_pair():
        key = rng.choice(held_out)
        verb, noun, adjective = key if width == 3 else (_random_verb(rng, key[0]), *key)
        subject, verb, objects, negated, period = _random_parts(rng, verb, noun, adjective)
        return sentence_pair(subject, verb, *objects, negated=negated, period=period)

    train = _unique(n_train, train_pair, "n_train")
    test = _unique(n_test, test_pair, "n_test")  # disjoint: train has no held-out combination
    src_vocab = Vocab.from_sentences(en for en, _ in train)
    tgt_vocab = Vocab.from_sentences(fr for _, fr in train)
    return Corpus(train, test, src_vocab, tgt_vocab)


def _random_parts(rng: random.Random, verb=None, noun=None, adjective=None):
    """Random arguments for ``sentence_pair``; a given noun/adjective goes in the first object."""
    verb = verb or rng.choice(_VERB_LIST)
    negated = rng.random() < 0.25
    objects = [_random_phrase(rng, verb, noun, adjective)]
    if not negated and rng.random() < 0.2:  # "x and y" only without negation ("ni ... ni")
        second = _random_phrase(rng, verb)
        while second.noun == objects[0].noun:
            second = _random_phrase(rng, verb)
        objects.append(second)
    return rng.choice(_SUBJECT_LIST), verb, objects, negated, rng.random() < 0.3


def _random_phrase(rng: random.Random, verb: str, noun=None, adjective=None) -> NounPhrase:
    noun = noun or rng.choice(_OBJECTS.get(verb, _NOUN_LIST))
    if adjective is None and rng.random() < 0.6:
        adjective = rng.choice(_ADJECTIVE_LIST)
    return NounPhrase(noun, adjective, rng.choice(_DETERMINER_WEIGHTS), rng.random() < 0.3)


def _random_verb(rng: random.Random, noun: str) -> str:
    return rng.choice([v for v in _VERB_LIST if noun in _OBJECTS.get(v, _NOUN_LIST)])


# rng.choice needs sequences; "the" and "a" are drawn twice as often as each possessive.
_SUBJECT_LIST, _VERB_LIST = list(_SUBJECTS), list(_VERBS)
_NOUN_LIST, _ADJECTIVE_LIST = list(_NOUNS), list(_ADJECTIVES)
NOUNS, ADJECTIVES = tuple(_NOUNS), tuple(_ADJECTIVES)  # the English words, for building sentences
_DETERMINER_WEIGHTS = ["the", "a", *_DETERMINERS]


def _unique(n: int, make, name: str) -> list[tuple[str, str]]:
    """``n`` distinct non-None results of ``make()``, in the order they were first made."""
    found: dict[tuple[str, str], None] = {}
    for _ in range(20 * n + 1000):
        pair = make()
        if pair is not None:
            found[pair] = None
            if len(found) == n:
                return list(found)
    raise ValueError(f"{name} ({n}) is more than the grammar can produce distinct sentences for")
