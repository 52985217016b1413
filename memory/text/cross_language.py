"""Cross-language keywords: a query's words in the other supported languages, for the keyword strategy.

A Russian question about vans shares no token with "We run four delivery vans", and on
multilingual-e5-small the pair sits at ~0.21, farther than unrelated same-language pairs. Recall
therefore also searches the blind index for the query's words translated through a small table of
everyday concepts (the things customers tell an agent about: their business, their people, their
plans, dates). Each term is reduced to search tokens by the same lemmatiser that indexed the
memories, so "фургонов" finds the concept through "фургон" and brings "van", "dodávka",
"furgoneta" and "バン" with it. A translated token is only a keyword: it counts where it occurs
in the space and is not too common there, exactly like the query's own words.

>>> sorted(translated_tokens("Сколько у них фургонов?"))
['dodávka', 'furgoneta', 'van', 'バン']
>>> translated_tokens("What a lovely day")
set()
"""

from __future__ import annotations

from functools import lru_cache

from memory.text.analysis import detect_language, search_tokens

LANGUAGES = ("en", "ru", "ja", "cs", "es")

# One line per concept: the words that name it in en | ru | ja | cs | es (several where usage splits).
# Single words only, in their dictionary form; Japanese terms of two or more characters (a single
# kanji is matched through bigrams, which it does not make on its own).
CONCEPT_TABLE = """
van, vans | фургон | バン | dodávka | furgoneta
truck, lorry | грузовик | トラック | kamion, nákladák | camión
car | машина, автомобиль | 自動車 | auto | coche
bike, bicycle | велосипед | 自転車 | kolo | bicicleta
delivery | доставка | 配送, 配達 | doručení, rozvoz | entrega, reparto
depot, warehouse | склад | 倉庫 | sklad | almacén
office | офис | 事務所, オフィス | kancelář | oficina
employee, staff | сотрудник, работник | 従業員, 社員, スタッフ | zaměstnanec | empleado
customer, client | клиент | 顧客 | zákazník | cliente
contract | контракт, договор | 契約 | smlouva | contrato
renewal | продление | 更新 | obnovení, prodloužení | renovación
invoice | счёт, счет | 請求書 | faktura | factura
payment, pay | оплата, платёж | 支払い, 支払 | platba | pago
price, cost | цена, стоимость | 価格, 料金 | cena | precio
plan, subscription | тариф, подписка | プラン | tarif, předplatné | plan, suscripción
accounting, bookkeeping | бухгалтерия | 会計, 経理 | účetnictví | contabilidad
software, program | программа | ソフト | software, program | programa
email, e-mail | почта | メール | e-mail, email | correo
phone, telephone | телефон | 電話 | telefon | teléfono
address | адрес | 住所 | adresa | dirección
city, town | город | 都市 | město | ciudad
apartment, flat | квартира | アパート, マンション | byt | piso, apartamento
house, home | дом | 自宅 | dům | casa
rent | аренда | 家賃 | nájem | alquiler
job, work | работа | 仕事 | práce | trabajo
company, firm | компания, фирма | 会社 | firma, společnost | empresa
salary, wage | зарплата | 給料 | plat, mzda | salario, sueldo
meeting | встреча, совещание | 会議 | schůzka | reunión
bakery | пекарня | パン屋, ベーカリー | pekárna | panadería
bread | хлеб | パン | chléb, chleba | pan
oven | печь, духовка | オーブン | pec, trouba | horno
flour | мука | 小麦粉 | mouka | harina
cafe, café | кафе | カフェ | kavárna | cafetería
coffee | кофе | コーヒー | káva, kafe | café
restaurant | ресторан | レストラン | restaurace | restaurante
shop, store | магазин | 店舗 | obchod | tienda
order | заказ | 注文 | objednávka | pedido
season | сезон | 季節, シーズン, 繁忙期 | sezóna | temporada
holiday, vacation | отпуск | 休暇 | dovolená | vacaciones
birthday | день рождения, рождение | 誕生日 | narozeniny | cumpleaños
wedding | свадьба | 結婚式 | svatba | boda
wife | жена | 奥さん | manželka | esposa, mujer
husband | муж | 主人 | manžel | marido, esposo
child, kid, children | ребёнок, ребенок, дети | 子供, 子ども | dítě, děti | hijo, niño
daughter | дочь | 娘さん | dcera | hija
son | сын | 息子 | syn | hijo
dog | собака | 子犬, 愛犬 | pes | perro
cat | кошка, кот | ネコ, 子猫 | kočka | gato
allergy, allergic | аллергия | アレルギー | alergie, alergický | alergia, alérgico
peanut, peanuts | арахис | ピーナッツ, 落花生 | arašídy, arašíd | cacahuete, maní
doctor | врач | 医者 | lékař, doktor | médico
hospital | больница | 病院 | nemocnice | hospital
school | школа | 学校 | škola | escuela, colegio
university | университет | 大学 | univerzita | universidad
language | язык | 言語 | jazyk | idioma
train | поезд | 電車 | vlak | tren
flight, plane | рейс, самолёт | 飛行機 | let, letadlo | vuelo, avión
vegetarian | вегетарианец | ベジタリアン | vegetarián | vegetariano
marathon | марафон | マラソン | maraton | maratón
guitar | гитара | ギター | kytara | guitarra
piano | пианино | ピアノ | klavír | piano
garden | сад | 庭園 | zahrada | jardín
website | сайт | サイト | web | web
printer | принтер | プリンター | tiskárna | impresora
laptop, computer | ноутбук, компьютер | パソコン | notebook, počítač | portátil, ordenador
january | январь | 一月 | leden | enero
february | февраль | 二月 | únor | febrero
march | март | 三月 | březen | marzo
april | апрель | 四月 | duben | abril
may | май | 五月 | květen | mayo
june | июнь | 六月 | červen | junio
july | июль | 七月 | červenec | julio
august | август | 八月 | srpen | agosto
september | сентябрь | 九月 | září | septiembre
october | октябрь | 十月 | říjen | octubre
november | ноябрь | 十一月 | listopad | noviembre
december | декабрь | 十二月 | prosinec | diciembre
"""
CONCEPTS: tuple[dict[str, tuple[str, ...]], ...] = tuple(
    {
        language: tuple(term.strip() for term in cell.split(","))
        for language, cell in zip(LANGUAGES, line.split("|"), strict=True)
    }
    for line in CONCEPT_TABLE.strip().splitlines()
)


@lru_cache(maxsize=1)
def _concept_tokens() -> tuple[dict[str, tuple[frozenset[str], ...]], ...]:
    """Each concept's terms as search tokens per language (a term of several tokens needs all of them)."""
    table = []
    for concept in CONCEPTS:
        table.append(
            {
                language: tuple(t for t in (frozenset(search_tokens(term, language)) for term in terms) if t)
                for language, terms in concept.items()
            }
        )
    return tuple(table)


def translated_tokens(query: str) -> set[str]:
    """Search tokens naming the query's concepts in the other languages, and by their other names in
    its own (empty when it names none)."""
    language = detect_language(query)
    own = search_tokens(query, language)
    if not own:
        return set()
    added: set[str] = set()
    for concept in _concept_tokens():
        terms = concept.get(language, ())
        if any(term <= own for term in terms):
            # Its other names in the query's own language count too ("job" finds "I work as …").
            added.update(token for other_terms in concept.values() for term in other_terms for token in term)
    return added - own
