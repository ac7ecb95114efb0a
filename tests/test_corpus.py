import pytest
import torch

from course_lib import corpus as grammar
from course_lib.corpus import NounPhrase, sentence_pair, translation_corpus
from course_lib.data import BOS_ID, EOS_ID, PAD_ID, UNK_ID, collate, tokenize

# ---- helpers: recover the (verb, noun, adjective) combinations from an English sentence ------
VERB_OF = {form: verb for verb, (third, _) in grammar._VERBS.items() for form in (verb, third)}
NOUN_OF = {form: noun for noun in grammar._NOUNS for form in (noun, noun + "s", noun + "es")}


def combinations(english: str, width: int = 3) -> set[tuple[str, ...]]:
    tokens = tokenize(english)
    verb = next(VERB_OF[t] for t in tokens if t in VERB_OF)
    return {
        (verb, NOUN_OF[tokens[i + 1]], token)[-width:]
        for i, token in enumerate(tokens)
        if token in grammar._ADJECTIVES
    }


@pytest.fixture(scope="module")
def corpus():
    return translation_corpus()


@pytest.fixture(scope="module")
def corpus_noun_adjective():
    return translation_corpus(holdout="noun_adjective")


def test_collate_shift_holds_on_real_sentences(corpus):
    batch = collate(corpus.train_ids[:32])
    assert (batch.tgt_in[:, 0] == BOS_ID).all()
    lengths = (batch.tgt_out != PAD_ID).sum(dim=1)
    for row, n in enumerate(lengths.tolist()):
        assert batch.tgt_out[row, n - 1] == EOS_ID  # EOS right after the last word
        assert torch.equal(batch.tgt_in[row, 1:n], batch.tgt_out[row, : n - 1])
        assert (batch.tgt_in[row, n:] == PAD_ID).all()
    assert batch.n_tokens == int(lengths.sum())


# ---- grammar ---------------------------------------------------------------------------------
A = "a"  # the indefinite determiner: a/an, some/any; un/une/des, or de/d' after a negation


@pytest.mark.parametrize(
    "subject, verb, objects, negated, english, french",
    [
        ("i", "eat", [("apple", "red")], False, "i eat the red apple", "je mange la pomme rouge"),
        ("i", "eat", [("apple",)], False, "i eat the apple", "je mange la pomme"),
        # feminine plural agreement, "a" -> "some" -> "des"
        ("she", "buy", [("shirt", "green", "the", True)], False,
         "she buys the green shirts", "elle achète les chemises vertes"),
        ("we", "like", [("dress", "white", A, True)], False,
         "we like some white dresses", "nous aimons des robes blanches"),
        ("marie", "wash", [("box", "grey", "her", True)], False,
         "marie washes her grey boxes", "marie lave ses boîtes grises"),
        ("they", "draw", [("cake", "french", "their", True)], False,
         "they draw their french cakes", "ils dessinent leurs gâteaux français"),
        # elision of je, le/la; ma/sa -> mon/son before a vowel; English a/an
        ("i", "like", [("car",)], False, "i like the car", "j'aime la voiture"),
        ("i", "buy", [("egg", None, A)], False, "i buy an egg", "j'achète un œuf"),
        ("you", "see", [("orange", "round")], False,
         "you see the round orange", "tu vois l'orange ronde"),
        ("he", "take", [("orange", None, "his")], False,
         "he takes his orange", "il prend son orange"),
        ("he", "find", [("apple", "expensive", A)], False,
         "he finds an expensive apple", "il trouve une pomme chère"),
        ("my sister", "sell", [("umbrella", None, A)], False,
         "my sister sells an umbrella", "ma sœur vend un parapluie"),
        # negation: ne ... pas, n' before a vowel, un/une/des -> de/d', the article kept
        ("he", "have", [("car", None, A)], True, "he does not have a car", "il n'a pas de voiture"),
        ("i", "eat", [("orange", "expensive", A, True)], True,
         "i do not eat any expensive oranges", "je ne mange pas d'oranges chères"),
        ("you all", "see", [("bird", "black")], True,
         "you all do not see the black bird", "vous ne voyez pas l'oiseau noir"),
        ("i", "like", [("bird", None, A)], True, "i do not like a bird", "je n'aime pas d'oiseau"),
        # coordination
        ("the girls", "carry", [("hat", "round", "my"), ("orange", None, "my")], False,
         "the girls carry my round hat and my orange",
         "les filles portent mon chapeau rond et mon orange"),
    ],
)  # fmt: skip
def test_sentence_pair(subject, verb, objects, negated, english, french):
    phrases = [NounPhrase(*o) for o in objects]
    assert sentence_pair(subject, verb, *phrases, negated=negated) == (english, french)


def test_sentence_pair_period_is_punctuation_on_both_sides():
    en, fr = sentence_pair("i", "read", NounPhrase("book"), period=True)
    assert (en, fr) == ("i read the book.", "je lis le livre.")
    assert tokenize(fr)[-1] == "."


THIRD_PERSON = {"take": "takes", "see": "sees", "want": "wants", "have": "has", "read": "reads",
                "choose": "chooses", "buy": "buys"}  # fmt: skip


@pytest.mark.parametrize(
    "verb, forms",
    [
        ("take", "prends prends prend prenons prenez prennent"),
        ("see", "vois vois voit voyons voyez voient"),
        ("want", "veux veux veut voulons voulez veulent"),
        ("have", "ai as a avons avez ont"),
        ("read", "lis lis lit lisons lisez lisent"),
        ("choose", "choisis choisis choisit choisissons choisissez choisissent"),
        ("buy", "achète achètes achète achetons achetez achètent"),
    ],
)
def test_verbs_are_conjugated_for_every_person(verb, forms):
    subjects = ["i", "you", "he", "we", "you all", "they"]
    pronouns = ["je", "tu", "il", "nous", "vous", "ils"]
    for subject, pronoun, form in zip(subjects, pronouns, forms.split(), strict=True):
        french = tokenize(sentence_pair(subject, verb, NounPhrase("book"))[1])
        expected_pronoun = "j'" if pronoun == "je" and form[0] in "aeé" else pronoun
        assert french[:2] == [expected_pronoun, form]
    assert sentence_pair("he", verb, NounPhrase("book"))[0].split()[1] == THIRD_PERSON[verb]


@pytest.mark.parametrize(
    "args, kwargs, name",
    [
        (("it", "eat", NounPhrase("apple")), {}, "subject"),
        (("i", "devour", NounPhrase("apple")), {}, "verb"),
        (("i", "eat", NounPhrase("banana")), {}, "noun"),
        (("i", "eat", NounPhrase("apple", "small")), {}, "adjective"),
        (("i", "eat", NounPhrase("apple", None, "your")), {}, "determiner"),
        (("i", "eat"), {}, "objects"),
        (("i", "eat", NounPhrase("apple"), NounPhrase("cake")), {"negated": True}, "objects"),
    ],
)
def test_sentence_pair_bad_input(args, kwargs, name):
    with pytest.raises(ValueError, match=name):
        sentence_pair(*args, **kwargs)


# ---- the corpus ------------------------------------------------------------------------------
def test_corpus_sizes_uniqueness_and_disjointness(corpus):
    assert len(corpus.train) == 50_000 and len(corpus.test) == 1_000
    assert len(set(corpus.train)) == 50_000 and len(set(corpus.test)) == 1_000
    assert not {en for en, _ in corpus.train} & {en for en, _ in corpus.test}


def test_corpus_vocabularies_come_from_training_and_cover_the_test_set(corpus):
    english = {t for en, _ in corpus.train for t in tokenize(en)}
    french = {t for _, fr in corpus.train for t in tokenize(fr)}
    assert set(corpus.src_vocab.itos[4:]) == english
    assert set(corpus.tgt_vocab.itos[4:]) == french
    assert 100 <= len(corpus.src_vocab) <= 130 and 150 <= len(corpus.tgt_vocab) <= 220
    for en, fr in corpus.test:
        assert corpus.src_vocab.unknown_words(en) == []
        assert corpus.tgt_vocab.unknown_words(fr) == []
    assert all(UNK_ID not in src + tgt for src, tgt in corpus.test_ids)


def test_corpus_sentences_are_short_and_show_every_phenomenon(corpus):
    lengths = [len(tokenize(s)) for pair in corpus.train + corpus.test for s in pair]
    assert max(lengths) <= 11
    french = {t for _, fr in corpus.train for t in tokenize(fr)}
    english = {t for en, _ in corpus.train for t in tokenize(en)}
    assert {"j'", "l'", "n'", "d'", "de", "ne", "pas", "et", "mon", "ses", ".", "vous"} <= french
    assert {"an", "some", "any", "not", "does", "and", "all", "."} <= english


def test_corpus_encodes_to_ids_that_decode_back(corpus):
    for (en, fr), (src, tgt) in zip(corpus.train[:200], corpus.train_ids[:200], strict=True):
        assert corpus.src_vocab.decode(src) == en
        assert corpus.tgt_vocab.decode(tgt) == fr
    assert corpus.encode([("i eat the red apple", "je mange la pomme rouge")]) == [
        (corpus.src_vocab.encode("i eat the red apple"),
         corpus.tgt_vocab.encode("je mange la pomme rouge"))
    ]  # fmt: skip


def test_lesson_sentence_is_consistent_with_the_corpus(corpus):
    pair = ("i eat the red apple", "je mange la pomme rouge")
    assert sentence_pair("i", "eat", NounPhrase("apple", "red")) == pair
    train = dict(corpus.train)
    for en, fr in [pair, ("i eat the apple", "je mange la pomme")]:
        assert corpus.src_vocab.unknown_words(en) == corpus.tgt_vocab.unknown_words(fr) == []
        assert train.get(en, fr) == fr  # if the sentence was generated, it has this translation


@pytest.mark.parametrize("holdout, width", [("triple", 3), ("noun_adjective", 2)])
def test_test_set_uses_combinations_never_seen_in_training(
    holdout, width, corpus, corpus_noun_adjective
):
    c = corpus if holdout == "triple" else corpus_noun_adjective
    seen = set().union(*(combinations(en, width) for en, _ in c.train))
    assert ("eat", "apple", "red")[-width:] in seen  # the lessons' combination stays in training
    for en, _ in c.test:
        assert combinations(en, width) - seen, f"{en!r} has no unseen combination"
    unseen = set().union(*(combinations(en, width) for en, _ in c.test)) - seen
    assert len(unseen) > 20  # many held-out combinations, not just one


def test_corpus_is_deterministic_for_a_seed():
    first = translation_corpus(3_000, 200, seed=5)
    assert first == translation_corpus(3_000, 200, seed=5)
    other = translation_corpus(3_000, 200, seed=6)
    assert first.train != other.train and first.test != other.test


@pytest.mark.parametrize(
    "kwargs, error, name",
    [
        ({"n_train": -5}, ValueError, "n_train"),
        ({"n_train": 1.5}, TypeError, "n_train"),
        ({"n_test": 0}, ValueError, "n_test"),
        ({"holdout": "verb"}, ValueError, "holdout"),
    ],
)
def test_translation_corpus_bad_input(kwargs, error, name):
    with pytest.raises(error, match=name):
        translation_corpus(**kwargs)
