"""When two statements are the same fact, and when a newer one updates or corrects an older one: the
rules shared by the writer (both engines), the console's preview and the evaluation.

Restatements. Measured on the labelled set (docs/quality.md), the bundled embedding model puts
paraphrases ("We run four delivery vans" / "Our fleet is four delivery vans") and minimal pairs that
say different things ("We have four vehicles" / "We have four drivers", "per month" / "per year") at
the same distances, 0.007–0.05. Distance alone therefore cannot merge safely. With
``dedup_requires_same_terms`` (the default) two statements merge only when, besides being within the
dedup distance, they carry the same values (numbers, months, weekdays, names) and the same relation
words (direction, period), and one's key terms are (almost) contained in the other's once wording is
normalised: lemmas, a small table of synonyms per language ("employees"/"staff"/"сотрудники" are one
concept, "office"/"based"/"sídlíme" another) and light verbs ("have", "use", "находиться") dropped.
"December is our busiest season" merges with "Our busiest season is December"; "We ship to Germany"
never with "We ship from Germany"; "office" never with "warehouse".

Updates. A newer statement replaces an older one as current only when both are about the same
subject (the customer, or the same other person) and the same attribute (where they live, how many
people work there, which plan — or, failing a known attribute, the same key terms), and a value
differs: another number, place, name, month. Statements that merely share a topic word carry no
differing value and both stay current. "Number" ("номер", "číslo") names no attribute of its own: whether
a phone number replaces an account number is the learned reading's to say (``same_number``).

Corrections. "We're not a bakery, we're a coffee roaster" names the old value it negates: the memory
that states it is corrected even though no number or name changes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from memory.text.analysis import (
    NUMBER_WORD_DIGITS,
    content_terms,
    detect_language,
    lemma,
    normalise,
    same_name,
    split_sentences,
    value_classes,
    words,
)
from memory.understanding.readings import SUBJECT_ATTRIBUTES, Reading, read
from memory.understanding.statement_subject import (
    SURE_NOT,
    THE_BUSINESS,
    THE_CUSTOMER,
    UNSURE,
    someone_else_probabilities,
    whose,
)

# Stop words that still decide what a statement says: direction and period.
RELATION_WORDS = {
    "en": {"to", "from", "into", "out", "per", "month", "year", "week", "day", "monthly", "yearly", "weekly", "daily",
           "annually", "before", "after"},
    "ru": {"в", "из", "на", "с", "от", "до", "месяц", "год", "неделя", "день", "ежемесячно", "ежегодно"},
    "cs": {"do", "z", "ze", "na", "od", "měsíc", "rok", "týden", "den", "měsíčně", "ročně", "týdně", "denně"},
    "de": {"nach", "aus", "von", "zu", "monat", "jahr", "woche", "tag", "monatlich", "jährlich"},
    "es": {"a", "de", "desde", "hacia", "mes", "año", "semana", "día", "mensual", "anual"},
    "fr": {"à", "de", "vers", "mois", "an", "année", "semaine", "jour", "mensuel", "annuel"},
}  # fmt: skip
# Relation words that only say where something is ("в Казани", "na Slovensko"), not which way it goes;
# a place name carries that meaning already, so they are compared only when they mark a period.
LOCATIVE_ONLY = {"в", "на", "do", "na", "a", "de", "à"}

# Words that name one concept in different wordings, per language (lemmas; Japanese: kanji/katakana
# pairs). A concept is an attribute too when it is listed in ATTRIBUTES.
CONCEPTS = {
    "located": "office based base headquarters офис базироваться kancelář sídlit sídlo sídlíme oficina ubicar ubicado "
               "büro sitz bureau 事務 務所",
    "staff": "employee staff worker people person team сотрудник человек работник штат zaměstnanec lidé lidi "
             "lidí člověk pracovník empleado trabajador persona plantilla mitarbeiter beschäftigte employé salarié "
             "従業 業員 社員",
    "renew": "renewal renew продление продлевать obnova obnovovat renovación renovar verlängerung verlängern "
             "renouvellement renouveler 更新",
    "ship": "ship deliver delivery доставлять доставка dodávat dodáváme vozit vozíme dodávka envío enviar enviamos "
            "entregar liefern versenden livrer expédier 出荷 発送 配送",
    "send": "send отправлять присылать posílat posílejte zasílat zasílejte envíen mandar 送付",
    "email": "email e-mail mail почта электронный correo electrónico メール",
    "prefer": "prefer preferred preferr favourite favorite удобный предпочитать raději nejraději preferovat preferuji "
              "preferir preferido bevorzugen préférer",
    "contact": "contact contacted communicate связь общаться kontakt komunikovat komunikuji contactar contacto "
               "kontaktieren 連絡",
    "main": "main primary principal основной главный hlavní principal haupt principal メイン 主な",
    "accounting": "accounting bookkeeping бухгалтерия účetnictví contabilidad buchhaltung comptabilité 会計 経理 freee",
    "busy": "busy busiest busier загруженный rušný ocupado 忙し",
    "sell": "sell продавать prodávat vender verkaufen vendre 販売",
    "van": "van фургон dodávka dodávky furgoneta transporter camionnette バン",
    "invoice": "invoice bill счет faktura factura rechnung facture 請求 求書",
}  # fmt: skip
# Verbs and nouns that carry no meaning of their own in a statement about the customer.
LIGHT_WORDS = {
    "have", "has", "be", "use", "run", "go", "get", "keep", "work", "located", "company", "firm", "business", "should",
    "way", "находиться", "работать", "использовать", "вести", "идти", "компания", "нужно", "иметь", "быть",
    "mít", "být", "používat", "vést", "firma", "máme", "prosím", "tener", "estar", "ser", "hacer", "usar", "deber",
    "deben", "ir", "empresa", "forma", "haben", "sein", "nutzen", "avoir", "être", "utiliser", "please", "just",
    "now", "теперь", "сейчас", "teď", "nyní", "ahora", "jetzt", "maintenant", "actually", "really",
}  # fmt: skip

# What a statement is about: a known attribute, from its words (lemmas; prefixes of three or more letters
# for inflected languages; substrings in Japanese).
ATTRIBUTES = {
    "residence": "live living reside move moved relocate relocated address city town home apartment flat жить "
                 "переехать переезжать адрес город квартира bydlet bydlím bydlíme přestěhovat adresa město byt "
                 "vivir vivo vivimos mudar mudarse dirección ciudad piso wohnen umziehen adresse stadt habiter "
                 "déménager adresse ville 住ん 住所 引っ越 在住 住み",
    "staff": "employee staff worker сотрудник работник штат zaměstnanec pracovník empleado trabajador plantilla "
             "mitarbeiter beschäftigte employé salarié 従業 業員 社員 スタッフ",
    # A company's vans and the customer's own car are two attributes: "My car is a Volvo." never updates
    # "Our delivery fleet is 5 vans." (measured: 12 of the 63 false updates in bench/recall_workload.py's
    # 2,000 profile facts, before they were split).
    "fleet": "van vans vehicle truck fleet фургон грузовик автопарк dodávka furgoneta vehículo camión flota "
             "fahrzeug lieferwagen véhicule camion バン 車両 トラック",
    "car": "car машина автомобиль auto vůz coche wagen voiture 自動車 マイカー",
    "plan": "plan subscription tier package тариф план подписка tarif plán předplatné suscripción tarifa abo "
            "abonnement forfait プラン 契約",
    "name": "name called зовут имя jmenovat jméno llamar nombre heißen nom appeler 名前 申し",
    "phone": "phone mobile mobil телефон telefon telefonní teléfono móvil handy telefonnummer handynummer mobilnummer "
             "téléphone 電話",
    # "Number" alone says a statement gives a number, not which: a phone, an account, an order, a PIN
    # (``same_number``).
    "number": "number номер číslo número numéro numero nummer 番号",
    "email": CONCEPTS["email"],
    "budget": "budget spend бюджет rozpočet presupuesto 予算",
    "age": "age old turned лет возраст let věk años edad alt âge 歳",
    "renewal": CONCEPTS["renew"],
}  # fmt: skip
# Words that date a statement rather than say what it is about.
TIME_WORDS = {
    "month", "week", "year", "day", "today", "yesterday", "now", "last", "ago", "месяц", "неделя", "год",
    "вчера", "сегодня", "теперь", "прошлый", "měsíc", "týden", "rok", "včera", "dnes", "minulý", "teď", "mes",
    "semana", "año", "ayer", "hoy", "pasado", "ahora", "先月", "先週", "昨日", "今日", "去年", "最近",
}  # fmt: skip
# Someone other than the customer: a statement about them is never an update of one about the customer.
# Only the statement's subject counts (its first words): "I live in Leeds with my partner" is about the customer.
OTHER_PEOPLE = (
    "sister brother wife husband son daughter friend mother mom mum father dad colleague boss partner kid child "
    "children neighbour neighbor cousin aunt uncle grandma grandpa сестра брат жена муж сын дочь друг подруга мама "
    "папа отец мать коллега начальник sestra bratr manželka manžel syn dcera kamarád kamarádka přítel máma táta "
    "otec matka kolega šéf hermana hermano esposa esposo marido hijo hija amigo amiga madre padre colega jefe "
    "schwester bruder frau mann sohn tochter freund mutter vater kollege sœur frère femme mari fils fille ami amie "
    "mère père niece nephew grandson granddaughter племянница племянник neteř synovec sobrina sobrino "
    "姉 妹 兄 弟 妻 夫 息子 娘 友達 友人 母 父 同僚 上司 姪 甥"
).split()

# Words that say the customer is correcting something said before ("Correction:", "actually").
CORRECTION_MARKERS = {
    "en": ("correction", "actually", "in fact", "to correct", "i meant", "sorry,", "wait,", "not anymore"),
    "ru": ("поправка", "на самом деле", "вообще-то", "точнее", "исправление", "исправляю", "я ошибся", "я ошиблась"),
    "cs": ("oprava", "vlastně", "ve skutečnosti", "přesněji", "opravuji", "spletl", "spletla"),
    "es": ("corrección", "en realidad", "de hecho", "mejor dicho", "me equivoqué", "perdón,"),
    "de": ("korrektur", "eigentlich", "genauer gesagt", "ich meinte"),
    "fr": ("correction", "en fait", "plutôt", "je voulais dire"),
    "ja": ("訂正", "実は", "正しくは", "間違え", "ではなく", "じゃなくて"),
}
# "not X, (but) Y" and "Y, not X.": the negated old value X, per language.
NEGATED_VALUE = {
    "en": re.compile(
        r"\b(?:not|isn't|aren't|wasn't|no longer)\s+(?:a|an|the|in|at|on|from)?\s*"
        r"([^\s,.;]+(?:\s[^\s,.;]+)?)\s*(?:[,;.!?]|$)"
    ),
    "ru": re.compile(r"(?:^|\s)не\s+(?:в|во|на|из)?\s*([^\s,.;]+)\s*(?:[,;.!?—-]|$)"),
    "cs": re.compile(r"(?:^|\s)(?:ne|nejsme|nejsem|není)\s+(?:v|ve|na|z)?\s*([^\s,.;]+)\s*(?:[,;.!?]|$)"),
    "es": re.compile(r"\bno\s+(?:somos|soy|es|vivo|vivimos)?\s*(?:una?|en|el|la)?\s*([^\s,.;]+)\s*(?:[,;.!?]|$)"),
    "de": re.compile(r"\b(?:nicht|kein|keine)\s+(?:in|eine?)?\s*([^\s,.;]+)\s*(?:[,;.!?]|$)"),
    "fr": re.compile(r"\bpas\s+(?:une?|à|de)?\s*([^\s,.;]+)\s*(?:[,;.!?]|$)"),
    "ja": re.compile(r"([\u4e00-\u9fff\u30a0-\u30ff]{2,})(?:ではなく|じゃなくて|ではありません)"),
}  # fmt: skip


@lru_cache(maxsize=16)
def _concept_index(table: str) -> dict[str, str]:
    source = CONCEPTS if table == "concepts" else ATTRIBUTES
    return {word: name for name, text in source.items() for word in text.split()}


def _is_cjk_pair(term: str) -> bool:
    return all("\u4e00" <= c <= "\u9fff" or "\u30a0" <= c <= "\u30ff" for c in term)


def key_terms(text: str, language: str | None = None) -> set[str]:
    """Content terms with synonyms folded into one concept and light words dropped.

    >>> sorted(key_terms("Our company has 40 staff.", "en")) == sorted(key_terms("We have 40 employees.", "en"))
    True
    """
    language = language or detect_language(text)
    index = _concept_index("concepts")
    folded = set()
    if language in ("ja", "zh", "ko"):
        # A katakana word is one term ("コーヒーマシン"), not pairs that every coffee sentence shares.
        folded.update(index.get(run, run) for run in _JA_KATAKANA_RUN.findall(text))
        text_for_pairs = _JA_KATAKANA_RUN.sub(" ", text)
    else:
        text_for_pairs = text
    for term in content_terms(text_for_pairs, language):
        if language in ("ja", "zh", "ko") and not term.isascii() and not _is_cjk_pair(term):
            continue  # a pair with a kana particle or ending is grammar ("ます", "は大")
        if term in LIGHT_WORDS:
            continue
        folded.add(index.get(term, term))
    if language not in ("ja", "zh", "ko"):
        for word in words(text):  # inflected forms the lemmatiser leaves alone ("posílejte", "dodáváme")
            if word in index:
                folded = {t for t in folded if t != word and lemma(word, language) != t}
                folded.add(index[word])
    return folded


def _values_agree(a: set[str], b: set[str], names: bool) -> bool:
    if not names:
        return a == b
    return all(any(same_name(x, y) for y in b) for x in a) and all(any(same_name(x, y) for x in a) for y in b)


def values_conflict(old_text: str, new_text: str) -> bool:
    """Both carry a value of one class (number, month, weekday, name) and the values differ: a changed
    fact, not a restatement. Names differ when neither side's names contain the other's."""
    old, new = value_classes(old_text), value_classes(new_text)
    for value_class in ("number", "month", "weekday"):
        if old[value_class] and new[value_class] and old[value_class] != new[value_class]:
            return True
    old_names, new_names = old["name"], new["name"]
    if old_names and new_names:
        old_in_new = all(any(same_name(x, y) for y in new_names) for x in old_names)
        new_in_old = all(any(same_name(x, y) for x in old_names) for y in new_names)
        return not (old_in_new or new_in_old)
    return False


def values_equal(a: str, b: str) -> bool:
    """The same values in every class (both without a number, or both with the same numbers, …)."""
    va, vb = value_classes(a), value_classes(b)
    return all(_values_agree(va[c], vb[c], c == "name") for c in ("number", "month", "weekday", "name"))


_JA_PERIOD = re.compile(r"毎[日週月年]|(?<![0-9０-９])[月年週](?!曜)")
_JA_KATAKANA_RUN = re.compile(r"[\u30a0-\u30ff]{2,}")


def relation_words(text: str, language: str) -> set[str]:
    if language == "ja":
        return set(_JA_PERIOD.findall(text))
    table = RELATION_WORDS.get(language, set()) - LOCATIVE_ONLY
    return {w for w in (lemma(word, language) for word in words(text)) if w in table} | {
        w for w in words(text) if w in table
    }


def same_terms(a: str, b: str) -> bool:
    """The same values and relation words, and one statement's key terms (almost) all in the other's.

    >>> same_terms("We have 40 employees.", "Our company has 40 staff.")
    True
    >>> same_terms("Our office is in Brno.", "Our warehouse is in Brno.")
    False
    """
    language_a, language_b = detect_language(a), detect_language(b)
    if language_a != language_b:
        return False  # across languages the wordings share no terms to compare; distance alone is not safe
    terms_a, terms_b = key_terms(a, language_a), key_terms(b, language_b)
    if not terms_a or not terms_b or not values_equal(a, b):
        return False
    smaller, larger = sorted((terms_a, terms_b), key=len)
    shared = len(smaller & larger)
    if shared / len(smaller) < 0.75 or len(larger - smaller) > 2:
        return False
    return relation_words(a, language_a) == relation_words(b, language_b)


def is_restatement(a: str, b: str, distance: float, *, dedup_distance: float, requires_same_terms: bool) -> bool:
    """Merge ``b`` into ``a``: close enough, no conflicting values, and (by default) the same terms."""
    if distance > dedup_distance or values_conflict(a, b):
        return False
    return same_terms(a, b) if requires_same_terms else True


# --- updates and corrections -------------------------------------------------------------------


def attributes_of(text: str, language: str | None = None) -> set[str]:
    """The known attributes a statement is about ("residence", "staff", "plan", …).

    >>> sorted(attributes_of("Correction: I moved to York last month.", "en"))
    ['residence']
    """
    return set(attribute_naming_words(text, language))


def attribute_naming_words(text: str, language: str | None = None) -> dict[str, set[str]]:
    """Each known attribute a statement is about, with the words of the statement that name it.

    >>> attribute_naming_words("My home airport is Manchester.", "en")
    {'residence': {'home'}}
    """
    language = language or detect_language(text)
    index = _concept_index("attributes")
    found: dict[str, set[str]] = {}
    if language in ("ja", "zh", "ko"):
        for word, name in index.items():
            if not word.isascii() and len(word) >= 2 and word in text:
                found.setdefault(name, set()).add(word)
        return found
    for word in words(text):
        base = lemma(word, language)
        if word in index or base in index:
            found.setdefault(index.get(word) or index[base], set()).add(word)
            continue
        if language in ("ru", "cs", "es", "de", "fr") and len(word) >= 5:
            for key, name in index.items():
                if len(key) >= 4 and not key.isascii() and word.startswith(key[: max(4, len(key) - 2)]):
                    found.setdefault(name, set()).add(word)
                    break
    return found


def others_named(text: str) -> set[str]:
    """The other people a statement is about ("my sister …"), by the relation word among its first words."""
    lowered = normalise(text)
    if detect_language(text) in ("ja", "zh", "ko"):
        head = re.split(r"[はがも]", lowered, maxsplit=1)[0]
        return {w for w in OTHER_PEOPLE if not w.isascii() and w in head}
    found = set()
    for word in words(lowered)[:3]:
        for other in OTHER_PEOPLE:
            inflected = len(other) >= 4 and word.startswith(other[:4]) and len(word) - len(other) <= 3
            if len(other) > 2 and (word == other or inflected):
                found.add(other)
    return found


# The attributes where the customer's business is a subject of its own: where the business is (a warehouse, an
# office) is not where the customer lives, and the office's number ("Broj ureda je 01 6254 377", read as contact;
# "El teléfono de la oficina es …", the tables' phone) is not the customer's mobile. For a plan, a fleet, a
# headcount, "I" and "we" of a sole trader speak of one thing ("I run a fleet of 5 vans." reads as the
# customer's, "We now run a fleet of 8 vans." as the business's), so there the business is the customer.
THE_BUSINESS_HAS_ITS_OWN = frozenset({"residence", "contact", "phone"})


def same_subject(old_text: str, new_text: str, attributes: Iterable[str] = ()) -> bool:
    """Both about the customer, or both about the same other person: by the relation words among their first
    words, or — where those name nobody on either side — unless the learned readings of whose attribute each gives
    (``memory.understanding.statement_subject``) are sure of two different subjects: the customer and someone else
    ("Mi mujer se llama Lucía." after "Me llamo Javier Morales.": "mujer" is in no list), or, for a place or a
    contact (``THE_BUSINESS_HAS_ITS_OWN`` among ``attributes``), the customer and their business ("Přestěhovali
    jsme sklad do Rajhradu." after "Bydlím v Brně.")."""
    old_others, new_others = others_named(old_text), others_named(new_text)
    if old_others != new_others:
        return False
    if old_others:
        return True
    subjects = set(whose([old_text, new_text]))
    if not THE_BUSINESS_HAS_ITS_OWN.intersection(attributes):
        subjects = {THE_CUSTOMER if subject == THE_BUSINESS else subject for subject in subjects}
    return UNSURE in subjects or len(subjects) == 1


def is_update(old_text: str, new_text: str) -> bool:
    """``new_text`` replaces ``old_text``: the same subject and attribute, and a value that differs.

    >>> is_update("I live in Leeds.", "Correction: I moved to York last month.")
    True
    >>> is_update("I hope to build my own family.", "This is a big move towards my goal of having a family.")
    False
    """
    # The subject last: its learned part embeds both statements, and the tables turn most pairs down first.
    return _tables_read_an_update(old_text, new_text) and same_subject(
        old_text, new_text, attributes_of(old_text) | attributes_of(new_text)
    )


def _tables_read_an_update(old_text: str, new_text: str) -> bool:
    """The word tables' part of ``is_update``: the same attribute, and a value that differs."""
    if not values_conflict(old_text, new_text) or others_named(old_text) != others_named(new_text):
        return False
    old_attributes, new_attributes = attributes_of(old_text), attributes_of(new_text)
    if (old_attributes | new_attributes) & {NUMBER, *NUMBERED} and gives_a_phone_number(
        old_text
    ) != gives_a_phone_number(new_text):
        return False  # a phone number and the phone itself ("My phone's an iPhone 13."): two attributes
    if _two_orders(old_text, new_text):
        return False
    language, old_language = detect_language(new_text), detect_language(old_text)
    old_terms, new_terms = _attribute_terms(old_text, old_language), _attribute_terms(new_text, language)
    if old_attributes or new_attributes:
        shared = (old_attributes & new_attributes) - {NUMBER}
        if not shared and _numbers_only(old_attributes, new_attributes):
            number_words = _words_of({NUMBER}, language) | _words_of({NUMBER}, old_language)
            return same_number(
                old_text,
                new_text,
                {t for t in old_terms if t not in number_words and t not in TIME_WORDS},
                {t for t in new_terms if t not in number_words and t not in TIME_WORDS},
            )
        if not shared or not _read_as(shared, old_text, new_text):
            return False
        if old_language != language:
            return True  # across languages only the attribute and the value can be compared
        # What else each says must not name two different things ("a kitten called Pepper" is not
        # "an apprentice called Jess"): the rest overlaps, or one of them says nothing else.
        attribute_words = _words_of(shared | {NUMBER}, language)
        old_rest = {t for t in old_terms if t not in attribute_words and t not in TIME_WORDS}
        new_rest = {t for t in new_terms if t not in attribute_words and t not in TIME_WORDS}
        return not old_rest or not new_rest or bool(old_rest & new_rest)
    if old_language != language or not old_terms or not new_terms:
        return False
    return len(old_terms & new_terms) / len(old_terms | new_terms) >= 0.34


# Words of the table that name an attribute only sometimes ("home": "My home airport is Heathrow.", "At home
# we speak Czech."; "city": "My favourite city is Porto."): a statement that names the attribute by one of them
# alone must also be read as that attribute by the learned reading before it updates or is updated. ``None``:
# every word of it — a dog, a cat, a shop "is called" as the customer is ("Our dog is called Biscuit." read as
# pets at 0.98, as a name at 0.01, where "My name is Emma Clarke." reads as a name at 0.95).
WEAK_WORDS: dict[str, frozenset[str] | None] = {"residence": frozenset({"home", "city", "town"}), "name": None}
# Measured on bench/recall_workload.py's profiles (50 customers, 2,000 facts, no update among them): of the 51
# false residence updates (a home airport, the language spoken at home, against where they live) 50 had a side
# named by "home" alone that the reading reads as a residence at most 0.39; the labelled real updates of eval/data
# read 0.58 or more.
CONFIRMING_SCORE = 0.45


def _read_as(shared: set[str], old_text: str, new_text: str) -> bool:
    """Whether some shared attribute is named surely enough: by words that name it unambiguously (or by the same
    weak words on both sides: "My home airport is Prague." and "My home airport is Vienna."), or else read as it
    by the learned reading."""
    for name in shared:
        if name not in WEAK_WORDS:
            return True
        weak = WEAK_WORDS[name]
        doubtful = [old_text, new_text]
        if weak is not None:
            naming = {text: attribute_naming_words(text).get(name, set()) for text in doubtful}
            if naming[old_text] == naming[new_text]:
                return True
            doubtful = [text for text in doubtful if naming[text] and naming[text] <= weak]
        if not doubtful or all(
            reading.attribute_scores.get(name, 0.0) >= CONFIRMING_SCORE for reading in read(doubtful)
        ):
            return True
    return False


# The attribute of "number" words alone, and the attributes whose value is a number ("my number" may be a phone).
NUMBER = "number"
NUMBERED = frozenset({"phone"})
# How sure the learned reading must be of both statements' attribute before it says which number each gives.
NUMBER_ATTRIBUTE_CONFIDENCE = 0.6


# A run of digits as phone numbers are written ("07700 900431", "+7 917 284-55-16", "073-615 40 28"), at least
# this many digits: longer than a model number ("iPhone 13", "Galaxy S23") or a year.
PHONE_DIGITS = 6
_DIGIT_RUN = re.compile(r"\+?\d[\d \-/.()]*\d")


def phone_numbers(text: str) -> set[str]:
    """The digits of each phone number a statement gives."""
    return {digits for run in _DIGIT_RUN.findall(text) if len(digits := re.sub(r"\D", "", run)) >= PHONE_DIGITS}


def gives_a_phone_number(text: str) -> bool:
    return bool(phone_numbers(text))


# An order number, a ticket number: an identifier of four digits or more.
_IDENTIFIER = re.compile(r"\d{4,}")


def _two_orders(old_text: str, new_text: str) -> bool:
    """Two statements about orders that name different order numbers and each say something else of its own are
    about two orders: a customer has many, and "Bestelling 70288 is een regenjas." is no new value of "Bestelling
    70144 was een fietstas.". "My order number is 5522." after "My order number is 4411." says nothing else: the
    number is what changed."""
    old_ids, new_ids = set(_IDENTIFIER.findall(old_text)), set(_IDENTIFIER.findall(new_text))
    if not old_ids or not new_ids or old_ids & new_ids:
        return False
    old_terms = key_terms(old_text, detect_language(old_text)) - old_ids
    new_terms = key_terms(new_text, detect_language(new_text)) - new_ids
    if not (old_terms - new_terms and new_terms - old_terms):
        return False
    return all(reading.attribute == "order" for reading in read([old_text, new_text]))


def _words_of(attributes: set[str], language: str) -> set[str]:
    found = {w for name in attributes for w in ATTRIBUTES[name].split()}
    return found | {lemma(w, language) for w in found}


def _numbers_only(old_attributes: set[str], new_attributes: set[str]) -> bool:
    """Both give a number and the words name no attribute they share: "my account number" and "my phone
    number", "my number" and "my phone", "číslo účtu" and "číslo objednávky"."""
    either = old_attributes | new_attributes
    return bool(old_attributes and new_attributes and NUMBER in either and either <= {NUMBER, *NUMBERED})


def same_number(old_text: str, new_text: str, old_rest: set[str], new_rest: set[str]) -> bool:
    """Whether two statements that each give a number give the same one (a phone, an account, an order, a PIN
    number): "number" says nothing of which, so the learned reading of both decides, and the words qualifying
    the number (``old_rest``, ``new_rest``: "account", "telefonní", "objednávka") where it is unsure.

    The model sure of both and reading two attributes: two numbers. Otherwise both qualified: the same
    qualifier (in one language); both bare ("my number"): the same; one qualified and the other not, or
    across languages: only when the model is sure both are the same attribute."""
    old, new = read([old_text, new_text])
    sure = all(
        r.attribute in SUBJECT_ATTRIBUTES and r.attribute_confidence >= NUMBER_ATTRIBUTE_CONFIDENCE for r in (old, new)
    )
    if sure and old.attribute != new.attribute:
        return False
    if old_rest and new_rest and detect_language(old_text) == detect_language(new_text):
        return bool(old_rest & new_rest)
    if not old_rest and not new_rest:
        return True
    return sure


def _attribute_terms(text: str, language: str) -> set[str]:
    """Key terms without the values: what the statement says something about."""
    values = value_classes(text, language)
    plain = values["number"] | values["month"] | values["weekday"]
    return {
        t
        for t in key_terms(text, language)
        if not t.isdigit()
        and t not in plain
        and t not in NUMBER_WORD_DIGITS
        and not any(same_name(t, name) for name in values["name"])
        and not (t.endswith("s") and t[:-1] in plain)
    }


def is_correction(text: str) -> bool:
    """The customer says they are correcting something ("Correction:", "actually", "not X, Y")."""
    language = detect_language(text)
    lowered = normalise(text)
    markers = CORRECTION_MARKERS.get(language, ())
    if language == "ja":
        return any(m in lowered for m in markers)
    return any(re.search(rf"(?<![\w']){re.escape(m)}", lowered) for m in markers) or bool(negated_values(text))


def negated_values(text: str) -> set[str]:
    """The old values a correction negates: "We're not a bakery, we're a coffee roaster" → {"bakery"}."""
    language = detect_language(text)
    pattern = NEGATED_VALUE.get(language)
    if pattern is None:
        return set()
    found = set()
    for sentence in split_sentences(text):
        for match in pattern.finditer(normalise(sentence) if language != "ja" else sentence):
            phrase = match.group(1)
            # An ordinal or a number ("not the third") is a stop word to the lemmatiser, yet the value.
            terms = content_terms(phrase, language) or [normalise(w) for w in words(phrase)]
            found.update(t for t in terms if t not in LIGHT_WORDS)
    return found


def states_negated_value(old_text: str, negated: set[str]) -> bool:
    """The older statement says what the correction negates (the negated term is among its terms)."""
    if not negated:
        return False
    language = detect_language(old_text)
    terms = set(content_terms(old_text, language)) | {normalise(w) for w in words(old_text)}
    if language in ("ja", "zh", "ko"):
        return any(n in old_text for n in negated)
    return any(n in terms or any(same_name(n, t) for t in terms if len(t) >= 4 and len(n) >= 4) for n in negated)


# Attributes a customer has one value of at a time: a new value replaces the old one.
SINGLE_VALUED = ("name", "residence")
# How sure the learned reading must be of both statements' attribute before it decides an update.
LEARNED_ATTRIBUTE_CONFIDENCE = 0.8
_CAPITALISED_WORD = re.compile(r"(?<=\s)([^\W\d_][\w'-]*)")


# The learned attribute of a phone number: one at a time too, when the statement gives one and names no other
# attribute the other statement does not ("My work number is …" and "My mobile is …" are two numbers).
PHONE_READING = "contact"


def single_valued(reading: Reading, text: str = "") -> bool:
    """The reading is sure the statement gives an attribute a customer has one value of at a time: a name, a
    residence, or — given ``text`` — a phone number."""
    one_at_a_time = reading.attribute in SINGLE_VALUED or (
        reading.attribute == PHONE_READING and gives_a_phone_number(text)
    )
    return (
        one_at_a_time
        and reading.attribute_confidence >= LEARNED_ATTRIBUTE_CONFIDENCE
        and reading.intent == "statement"
        and not reading.negative
    )


def _another_phone_number(old_text: str, new_text: str) -> bool:
    """Both give a phone number, the numbers differ, and neither names an attribute the other does not (a work
    number, the business's number): what the word tables name besides the number itself."""
    old_numbers, new_numbers = phone_numbers(old_text), phone_numbers(new_text)
    if not old_numbers or not new_numbers or old_numbers & new_numbers:
        return False
    number_attributes = {NUMBER, *NUMBERED, "contact"}
    return attributes_of(old_text) - number_attributes == attributes_of(new_text) - number_attributes


def _named_words(text: str) -> set[str]:
    """Capitalised words after the first: names and places (and, in German, every noun)."""
    return {w.lower() for w in _CAPITALISED_WORD.findall(" " + text.strip())[1:] if w[:1].isupper()}


# Attributes a customer may hold several of (two cars), so a new value adds one — unless the new statement names
# the old one beside another: "Den Golf habe ich verkauft, jetzt habe ich einen Škoda Octavia.", "Octavii jsem
# prodal, teď mám Kodiaq.". A wrong replacement stays bounded: the current row itself names the old value.
REPLACED_BY_NAME = ("vehicle",)
# A name of a thing in Japanese or Chinese text: a run of katakana or Latin letters ("アクア", "Prius").
_CJK_NAME = re.compile(r"[\u30a1-\u30faA-Za-z][\u30a1-\u30fcA-Za-z0-9-]+")


def replaced_by_name(reading: Reading) -> bool:
    return (
        reading.attribute in REPLACED_BY_NAME
        and reading.attribute_confidence >= LEARNED_ATTRIBUTE_CONFIDENCE
        and reading.intent == "statement"
    )


def _value_names(text: str, *, first_word: bool = False) -> set[str]:
    if detect_language(text) in ("ja", "zh", "ko"):
        return {name.lower() for name in _CJK_NAME.findall(text)}
    if first_word:
        return {w.lower() for w in _CAPITALISED_WORD.findall(" " + text.strip()) if w[:1].isupper()}
    return _named_words(text)


def names_the_old_and_a_new(old_text: str, new_text: str) -> bool:
    """The new statement names a thing the old one named, and another thing the old one did not."""
    old_names = _value_names(old_text)
    new_names = _value_names(new_text, first_word=True)
    mentioned = any(same_name(old, new) for old in old_names for new in new_names)
    added = any(not any(same_name(old, new) for old in old_names) for new in _value_names(new_text))
    return mentioned and added


def learned_update(old_text: str, new_text: str, old: Reading, new: Reading) -> bool:
    """The learned reading says both are the same one-valued attribute (where they live, their name) of the same
    subject, and the value differs: another phone number, or other names and places.

    The word tables decide first (``is_update``); this covers the phrasings and languages they do not list."""
    if old.attribute != new.attribute:
        return False
    replaced = replaced_by_name(old) and replaced_by_name(new)
    if not replaced and not (single_valued(old, old_text) and single_valued(new, new_text)):
        return False
    if not same_subject(old_text, new_text, {old.attribute}):
        return False
    # Without the tables' word for the attribute, the subject must be read, not only not contradicted: both sure
    # to be the customer's own ("Die Festnetznummer meiner Eltern ist …" is not the customer's new number).
    if max(someone_else_probabilities([old_text, new_text])) > SURE_NOT:
        return False
    if replaced:
        return names_the_old_and_a_new(old_text, new_text)
    if old.attribute == PHONE_READING:
        return _another_phone_number(old_text, new_text)
    if values_conflict(old_text, new_text):
        return True
    old_names, new_names = _named_words(old_text), _named_words(new_text)
    return bool(old_names and new_names and not old_names & new_names)


def supersession(old_text: str, new_text: str, source: str | None = None) -> str:
    """Why ``new_text`` replaces ``old_text`` as current ("correction" or "update"), or "" when both stay.

    ``source`` is the customer's own words the new entry comes from: only they can make it a correction.
    """
    source = source or new_text
    correcting = is_correction(source)
    negated = negated_values(source) if correcting else set()
    if negated and same_subject(old_text, new_text) and states_negated_value(old_text, negated):
        return "correction"
    if is_update(old_text, new_text):
        return "correction" if correcting else "update"
    return ""
