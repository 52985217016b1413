# ruff: noqa: E501  (phrase tables read best one language a line)
"""The offline engine's documented multilingual rule set: marker phrases per language.

Data only; the offline engine (``offline``), the forget judge and the injected-instruction check apply it. ``FIRST_PERSON`` lists
single words separated by spaces; every other table lists phrases separated by commas. Latin and Cyrillic phrases match on word boundaries of the normalised
sentence; Japanese phrases match as substrings. Languages: English, Russian, Japanese, Czech, German, Spanish, French.
"""

FIRST_PERSON = {
    "en": "i me my mine myself we us our ours ourselves i'm we're i've we've i'd we'd i'll we'll",
    "ru": "я мне меня мной мой моя моё мое мои моего моей мы нас нам нами наш наша наше наши нашей нашего нашу наших",
    "cs": "já mě mi mne mnou můj moje moji mého mé my nás nám námi náš naše našeho naší našich jsem jsme",
    "de": "ich mich mir mein meine meinen meinem meiner wir uns unser unsere unseren unserem unserer",
    "es": "yo me mi mis mío mía nosotros nosotras nos nuestro nuestra nuestros nuestras",
    "fr": "je j' moi me mon ma mes nous notre nos",
    "ja": "私 僕 俺 弊社 当社 うち わたし 我々 私たち 自分",
}

# Pro-drop languages mark the speaker on the verb: Czech "máme", Spanish "tenemos", "tengo".
FIRST_PERSON_VERB_ENDINGS = {"cs": ("me", "ím", "ám", "em"), "es": ("amos", "emos", "imos", "go", "oy")}

SMALL_TALK = {
    "en": "hi, hello, hey, thanks, thank you, good morning, good evening, good afternoon, bye, goodbye, ok, okay, cheers, "
    "great, sounds good, have a nice day, the weather, weather, lovely day",
    "ru": "привет, здравствуйте, спасибо, добрый день, доброе утро, добрый вечер, пока, до свидания, хорошо, отлично, погода",
    "cs": "ahoj, dobrý den, děkuji, díky, na shledanou, dobře, super, počasí",
    "de": "hallo, danke, guten tag, guten morgen, tschüss, auf wiedersehen, gut, super, wetter",
    "es": "hola, gracias, buenos días, buenas tardes, adiós, vale, genial, el tiempo",
    "fr": "bonjour, merci, salut, au revoir, bonsoir, d'accord, super, météo",
    "ja": "こんにちは, ありがとう, よろしく, おはよう, こんばんは, さようなら, はい、, はい。, 了解, 天気",
}

# Opening words stripped from stored content: greetings, fillers, discourse markers. Those marked
# with a trailing "*" are stripped only when a comma, colon or "!" follows ("So, …" but not "So far …").
LEADING_FILLERS = {
    "en": "hi*, hello*, hey*, well*, so*, oh*, um*, uh*, yeah*, yes*, ok*, okay*, sorry*, wait*, anyway*, also*, and also*, actually, correction, by the way, btw, just so you know, fyi, in fact, to be honest, oh and, just to let you know, i said that wrong*, i got that wrong*, let me correct that*, i meant*",
    "ru": "привет*, здравствуйте*, ну*, так*, да*, итак*, слушайте*, кстати, вообще-то, на самом деле, поправка, исправление, точнее",
    "cs": "ahoj*, dobrý den*, no*, tak*, ano*, jo*, mimochodem, vlastně, oprava, přesněji, ve skutečnosti",
    "de": "hallo*, also*, naja*, ja*, übrigens, eigentlich, korrektur, genauer gesagt",
    "es": "hola*, bueno*, pues*, oye*, sí*, por cierto, en realidad, de hecho, corrección, mejor dicho",
    "fr": "bonjour*, salut*, alors*, bon*, oui*, au fait, en fait, correction",
    "ja": "こんにちは、, こんにちは。, 実は、, 実は, 訂正：, 訂正:, 訂正です。, 訂正、, ところで、, えーと、, あの、, そういえば、",
}
# "…, and I …": a conjunction that opens a second statement about the customer (split into two entries).
CLAUSE_JOINERS = {
    "en": "and, but",
    "ru": "и, а, но",
    "cs": "a, ale",
    "de": "und, aber",
    "es": "y, pero",
    "fr": "et, mais",
}
# Subject pronouns: the word after one is the statement's verb ("I prefer email"), never its topic.
SUBJECT_PRONOUNS = {
    "en": "i we",
    "ru": "я мы",
    "cs": "já my",
    "de": "ich wir",
    "es": "yo nosotros nosotras",
    "fr": "je nous",
    "ja": "",
}
# Words that are never a topic on their own: verbs and fillers customers use around the subject.
NOT_A_TOPIC = {
    "en": "answer prefer arrive change sentence like want need hope think know feel love live move moved run work use get make go come say tell try start plan let see look keep call send give take find help happen wish guess mean thing lot way time really just now wrong right",
    "ru": "хотеть думать знать любить жить работать использовать делать сказать вещь раз время очень сейчас теперь",
    "cs": "chtít myslet vědět mít rád bydlet pracovat používat dělat říct věc čas teď",
    "de": "wollen denken wissen lieben wohnen arbeiten nutzen machen sagen sache zeit jetzt",
    "es": "querer pensar saber amar vivir trabajar usar hacer decir cosa vez tiempo ahora",
    "fr": "vouloir penser savoir aimer habiter travailler utiliser faire dire chose fois temps maintenant",
}

INSTRUCTION = {
    "en": "always, never, please, don't, do not, make sure, remember to",
    "ru": "всегда, никогда, пожалуйста, не звоните, не пишите, обязательно",
    "cs": "vždy, vždycky, nikdy, prosím, nevolejte, nepište",
    "de": "immer, nie, niemals, bitte, rufen sie nicht",
    "es": "siempre, nunca, por favor, no llame, asegúrese",
    "fr": "toujours, jamais, s'il vous plaît, veuillez, merci de, n'appelez pas",
    "ja": "ください, 下さい, 必ず, しないで, 常に, いつも, 絶対",
}

HARD_CONSTRAINT = {
    "en": "never, always, must, only, cannot, can't, allergic, deadline, at the latest, no later than, required, mandatory",
    "ru": "никогда, всегда, обязательно, только, нельзя, не можем, аллергия, крайний срок, не позднее",
    "cs": "nikdy, vždy, musí, musíme, pouze, nemůžeme, alergie, termín, nejpozději, povinně",
    "de": "nie, niemals, immer, muss, müssen, nur, können nicht, allergie, frist, spätestens",
    "es": "nunca, siempre, debe, debemos, solo, no podemos, alergia, plazo, a más tardar, obligatorio",
    "fr": "jamais, toujours, doit, devons, seulement, ne pouvons pas, allergie, délai, au plus tard, obligatoire",
    "ja": "必ず, 絶対, しかできません, できません, アレルギー, 締め切り, 期限, までに, 必須",
}

# To-do words: no longer what makes a row a task (the learned reading of memory.understanding.task_reading
# decides); they stay here as words of the rule set, never a topic (memory.extraction.offline._marker_terms).
TASK = {
    "en": "need to, have to, remind me, tomorrow, next week, by friday, by monday, later today, to do, going to",
    "ru": "нужно, надо, завтра, напомните, на следующей неделе, сегодня вечером",
    "cs": "musím, potřebuji, potřebujeme, zítra, příští týden, připomeňte, dnes večer",
    "de": "ich muss, wir müssen, morgen, nächste woche, erinnern sie, heute abend",
    "es": "tengo que, tenemos que, necesito, necesitamos, mañana, la próxima semana, recuérdame, esta tarde",
    "fr": "je dois, nous devons, demain, la semaine prochaine, rappelez-moi, ce soir, besoin de",
    "ja": "明日, 来週, しなければ, しないといけない, 予定です, 忘れずに",
}

# Past-time expressions: (phrase, days before the message time).
EVENT_TIMES = {
    "en": [("day before yesterday", 2), ("yesterday", 1), ("last week", 7), ("last month", 30), ("this morning", 0),
           ("earlier today", 0), ("today", 0)],
    "ru": [("позавчера", 2), ("вчера", 1), ("на прошлой неделе", 7), ("в прошлом месяце", 30), ("сегодня утром", 0),
           ("сегодня", 0)],
    "cs": [("předevčírem", 2), ("včera", 1), ("minulý týden", 7), ("minulý měsíc", 30), ("dnes ráno", 0),
           ("dnes", 0)],
    "de": [("vorgestern", 2), ("gestern", 1), ("letzte woche", 7), ("letzten monat", 30), ("heute morgen", 0),
           ("heute", 0)],
    "es": [("anteayer", 2), ("ayer", 1), ("la semana pasada", 7), ("el mes pasado", 30), ("esta mañana", 0),
           ("hoy", 0)],
    "fr": [("avant-hier", 2), ("hier", 1), ("la semaine dernière", 7), ("le mois dernier", 30), ("ce matin", 0),
           ("aujourd'hui", 0)],
    "ja": [("おととい", 2), ("一昨日", 2), ("昨日", 1), ("先週", 7), ("先月", 30), ("今朝", 0), ("今日", 0)],
}  # fmt: skip

# "N days/weeks ago" per language: a regex with one number group, and the days per unit.
EVENT_AGO = {
    "en": [(r"(\d+) days? ago", 1), (r"(\d+) weeks? ago", 7)],
    "ru": [(r"(\d+) (?:дня|дней|день) назад", 1), (r"(\d+) (?:недели|недель|неделю) назад", 7)],
    "cs": [(r"před (\d+) dny", 1), (r"před (\d+) týdny", 7)],
    "de": [(r"vor (\d+) tagen", 1), (r"vor (\d+) wochen", 7)],
    "es": [(r"hace (\d+) días", 1), (r"hace (\d+) semanas", 7)],
    "fr": [(r"il y a (\d+) jours", 1), (r"il y a (\d+) semaines", 7)],
    "ja": [(r"(\d+)日前", 1), (r"(\d+)週間前", 7)],
}

# Forget requests and corrections, for the offline forget judge. EXPLICIT_FORGET always asks to
# delete (and the message is never mined); CORRECTION negates something that may be stored (it
# deletes only what lies within the forget floor, and is mined as usual when nothing does).
EXPLICIT_FORGET = {
    "en": "forget, delete, remove what you know, don't remember, stop remembering, erase",
    "ru": "забудь, забудьте, удалите, удали, сотрите, не запоминайте",
    "cs": "zapomeňte, zapomeň, smažte, vymažte, nepamatujte si",
    "de": "vergiss, vergessen sie, löschen sie, lösch, merken sie sich nicht",
    "es": "olvida, olvide, olvídate, olvídese, borra, borre, elimina",
    "fr": "oublie, oubliez, supprimez, efface, effacez",
    "ja": "忘れてください, 忘れて下さい, 忘れてほしい, 削除してください, 削除して下さい, 消してください, 覚えないでください",
}
CORRECTION = {
    "en": "that's not, that is not, not my company, not our company, isn't my company, isn't our company, is not my company, we don't, we do not, i don't, i do not, that's wrong, that is wrong, incorrect, not true, we never, no longer, we're not, we are not",
    "ru": "это не, не моя компания, не наша компания, мы не, я не, неправда, неверно, больше не, уже не",
    "cs": "to není, není moje firma, není naše firma, není moje, není naše, neděláme, nejsme, nebydlím, nebydlíme, to je špatně, už ne, už nebydlím, už nebydlíme",
    "de": "das ist nicht, nicht meine firma, nicht unsere firma, wir machen kein, machen das nicht, wir haben keine, das stimmt nicht, nicht mehr",
    "es": "eso no es, no es mi empresa, no es nuestra empresa, no hacemos, no tenemos, no somos, no soy, no vivo, no vivimos, eso es incorrecto, ya no",
    "fr": "ce n'est pas, pas mon entreprise, pas notre entreprise, nous ne, je ne, c'est faux, plus de",
    "ja": "違います, ではありません, じゃない, ではない, していません, 作っていません, 住んでいません, もうない",
}
# What a forget request may name instead of the words of the memory ("forget my phone number" for
# "My phone number is +420 …"). Per attribute: ``asks`` are the request words (matched at a word's
# start, so "адрес" also matches "адреса"; substrings in Japanese), ``states`` the words of a
# statement of that attribute (same matching), ``value`` a value the statement must carry
# ("phone": a phone number, "email": an e-mail address) — a preference that merely mentions a phone
# is not a phone number. The first attribute whose request word occurs wins, so "email address"
# is an e-mail, not a residence.
FORGET_ATTRIBUTES = {
    "email": {
        "asks": {
            "en": "email, e-mail", "ru": "почт, email, e-mail, имейл", "ja": "メール",
            "cs": "e-mail, email, mail", "es": "correo, email, e-mail", "de": "e-mail, email", "fr": "e-mail, courriel",
        },
        "states": {}, "value": "email",
    },
    "phone": {
        "asks": {
            "en": "phone, mobile number, cell number, telephone", "ru": "телефон, мобильн",
            "ja": "電話, 携帯", "cs": "telefon, mobil", "es": "teléfono, móvil, celular",
            "de": "telefon, handy", "fr": "téléphone, portable",
        },
        "states": {}, "value": "phone",
    },
    "allergy": {
        "asks": {
            "en": "allerg", "ru": "аллерг", "ja": "アレルギー", "cs": "alergi, alergic", "es": "alergi, alérgic",
            "de": "allergi", "fr": "allergi",
        },
        "states": {
            "en": "allerg", "ru": "аллерг", "ja": "アレルギー", "cs": "alergi, alergic", "es": "alergi, alérgic",
            "de": "allergi", "fr": "allergi",
        },
        "value": "",
    },
    "residence": {
        "asks": {
            "en": "address, city, town, where i live, hometown, home town, residence",
            "ru": "адрес, город, где я живу, место жительства, проживани",
            "ja": "住所, 住んでいる, 住まい",
            "cs": "adres, měst, bydliště, kde bydlím",
            "es": "dirección, domicilio, ciudad, dónde vivo",
            "de": "adresse, stadt, wohnort", "fr": "adresse, ville, domicile",
        },
        "states": {
            "en": "live in, living in, lived in, moved to, move to, address, reside, home is in",
            "ru": "живу, живём, живем, жила, жил, переехал, адрес, проживаю",
            "ja": "住んで, 住所, 引っ越, 在住",
            "cs": "bydlím, bydlíme, bydlel, přestěhoval, adres",
            "es": "vivo en, vivimos en, vivía en, me mudé, nos mudamos, dirección, domicilio",
            "de": "wohne, wohnen, umgezogen, adresse", "fr": "habite, habitons, déménagé, adresse",
        },
        "value": "",
    },
    "name": {
        "asks": {
            "en": "my name", "ru": "моё имя, мое имя, имя", "ja": "名前", "cs": "jméno, jména", "es": "mi nombre",
            "de": "meinen namen, mein name", "fr": "mon nom",
        },
        "states": {
            "en": "my name is, call me", "ru": "меня зовут, моё имя, мое имя", "ja": "名前は, と申します",
            "cs": "jmenuji se, jmenuju se, mé jméno", "es": "me llamo, mi nombre es",
            "de": "ich heiße, mein name ist", "fr": "je m'appelle, mon nom est",
        },
        "value": "",
    },
}  # fmt: skip
# Words around an attribute that name no value ("my phone NUMBER", "the NOTE about my allergy").
ATTRIBUTE_FILLERS = {
    "en": "number, note, info, information, details, data, everything, what you know, new, current, electronic",
    "ru": "номер, запись, информаци, данные, всё, все, что вы знаете, нов, текущ, электронн",
    "ja": "番号, 情報, メモ, データ, 新しい, 今の",
    "cs": "čísl, poznámk, informac, údaj, všechno, co víte, nov, současn, elektronick",
    "es": "número, nota, información, datos, todo, lo que sabe, nuev, actual, electrónic",
    "de": "nummer, notiz, informationen, daten, neue", "fr": "numéro, note, informations, données, nouvel",
}  # fmt: skip
# "Forget my OLD address": the request names a value that is no longer current; it never takes the current one.
OLD_VALUE = {
    "en": "old, previous, former, earlier, outdated",
    "ru": "стар, прежн, предыдущ, бывш",
    "ja": "古い, 前の, 以前の, 旧",
    "cs": "star, předchozí, dřívější, bývalý, bývalou, původní",
    "es": "antigu, anterior, vieja, viejo",
    "de": "alte, alten, vorherige, frühere", "fr": "ancien, précédent",
}  # fmt: skip
# Words right before a forget verb that make it a statement or its opposite, not a request:
# "don't forget our renewal", "we never forget a deadline", "не забудьте".
NOT_A_REQUEST_BEFORE = {
    "en": "don't, do not, never, not, won't, didn't, we, i, they, he, she, you never, shouldn't",
    "ru": "не, никогда не, мы, я, они",
    "cs": "ne, nikdy, my, já",
    "de": "nicht, nie, wir, ich",
    "es": "no, nunca, nosotros, yo",
    "fr": "ne, n', jamais, nous, je",
    "ja": "",
}
# A forget verb that is asked about, supposed, reported or quoted is not a request (2026-11-30). In the
# same sentence before the verb: a question that asks HOW / WHY / WHEN / WHETHER ("how do I make you forget …",
# "do you delete my data after 30 days?"),
# a supposition ("what if you forgot …") or a verb of saying ("I never said forget …", "my colleague
# said: forget …"). A modal request is still a request: "can you forget …", "could you please delete …".
NOT_A_REQUEST_CONTEXT = {
    "en": "how, why, what if, what happens, whether, if, when, do you, does, did, said, says, say, told, tells, asked me, wrote, writes, heard",
    "ru": "как, почему, зачем, если, сказал, сказала, сказали, говорит, говорил, говорила, написал, написала",
    "cs": "jak, proč, kdyby, kdybych, kdybychom, jestli, zda, řekl, řekla, řekli, říká, říkal, říkala, napsal, napsala",
    "de": "wie, warum, wieso, ob, wenn, falls, sagte, sagt, gesagt, schrieb, geschrieben",
    "es": "cómo, por qué, si, dijo, dice, decía, escribió",
    "fr": "comment, pourquoi, si, dit, disait, a dit, écrit",
    "ja": "どうやって, どうすれば, どうしたら, なぜ, もし",
}
# After the verb, in the same sentence: a condition ("would you forget my number if I asked?") or, in
# Japanese, the quotation marker of reported speech (「忘れてくださいと言った」).
NOT_A_REQUEST_AFTER = {
    "en": "if i, if we, if someone, if somebody, if asked, if they",
    "ru": "если я, если мы, если бы",
    "cs": "kdybych, kdybychom, kdyby, jestli",
    "de": "wenn ich, wenn wir, falls ich, falls wir",
    "es": "si yo, si se lo, si te lo, si le",
    "fr": "si je, si on, si nous",
    "ja": "と言, って言, とおっしゃ, と書, かどうか",
}
# "Forget everything", "delete all my data", "забудь всё обо мне": a request to erase everything is not
# one a message can carry out (the caps and the floor stop it); it is answered as such and routed.
BROAD_FORGET = {
    "en": "everything, all my data, all our data, all data, all my information, all our information, all my details, all of it, all about me, all about us, all you know, anything you know",
    "ru": "всё, все мои данные, все наши данные, все данные, все сведения",
    "cs": "všechno, vše, všechna data, všechna moje data, všechny údaje, všechny moje údaje",
    "de": "alles, alle meine daten, alle unsere daten, alle daten",
    "es": "todo, todos mis datos, todos nuestros datos, todos los datos",
    "fr": "tout, toutes mes données, toutes nos données, toutes les données",
    "ja": "全部, すべて, 全て, 全データ, 私のデータ, 私の情報",
}
# What may stand beside a broad word without naming anything specific ("everything about me", "all my data").
BROAD_FILLER_TOKENS = {"data", "information", "info", "details", "detail", "memory", "memories", "обо", "данные",
                       "сведения", "údaje", "daten", "datos", "données", "データ", "情報"}  # fmt: skip
# The answer to a broad request: true, in the customer's language, and pointing where it can be done.
BROAD_CONFIRMATIONS = {
    "en": "I can't erase everything from a single message. A full erasure of your data is done by the service operator; I can also forget one specific thing if you tell me what.",
    "ru": "Удалить всё по одному сообщению я не могу. Полное удаление ваших данных выполняет оператор сервиса; а забыть что-то конкретное я могу — скажите, что именно.",
    "cs": "Z jedné zprávy nemohu smazat všechno. Úplné smazání vašich údajů provádí provozovatel služby; konkrétní věc zapomenu, když mi řeknete kterou.",
    "de": "Alles auf eine einzelne Nachricht hin zu löschen, kann ich nicht. Eine vollständige Löschung Ihrer Daten nimmt der Betreiber des Dienstes vor; etwas Bestimmtes vergesse ich, wenn Sie mir sagen, was.",
    "es": "No puedo borrarlo todo a partir de un solo mensaje. El borrado completo de sus datos lo realiza el operador del servicio; puedo olvidar algo concreto si me dice qué.",
    "fr": "Je ne peux pas tout effacer à partir d'un seul message. L'effacement complet de vos données est fait par l'opérateur du service ; je peux oublier une chose précise si vous me dites laquelle.",
    "ja": "一つのメッセージですべてを消去することはできません。データの完全な削除はサービスの運営者が行います。特定の内容であれば、何を忘れればよいか教えてください。",
}
# What follows these in an explicit request names the target ("forget what you know about X").
FORGET_TARGET_MARKERS = {
    "en": "about, that",
    "ru": "о, об, про, что",
    "cs": "o, že",
    "de": "über, dass",
    "es": "sobre, de, que",
    "fr": "sur, de, que",
    "ja": "について, のこと",
}
CONFIRMATIONS = {
    "en": (
        "Done, I have forgotten: {items}.",
        "I had nothing stored about that, so there was nothing to forget.",
        " ({more} more matched and can be removed if you ask again.)",
    ),
    "ru": (
        "Готово, я забыл: {items}.",
        "Об этом у меня ничего не сохранено, забывать нечего.",
        " (Ещё совпало: {more}; их можно удалить повторной просьбой.)",
    ),
    "cs": (
        "Hotovo, zapomněl jsem: {items}.",
        "O tom jsem nic uloženého neměl, nebylo co zapomenout.",
        " (Shodovalo se ještě {more}; mohu je smazat, když požádáte znovu.)",
    ),
    "de": (
        "Erledigt, ich habe vergessen: {items}.",
        "Dazu hatte ich nichts gespeichert, es gab nichts zu vergessen.",
        " (Weitere {more} passten; ich lösche sie, wenn Sie erneut fragen.)",
    ),
    "es": (
        "Hecho, he olvidado: {items}.",
        "No tenía nada guardado sobre eso, así que no había nada que olvidar.",
        " (Coincidieron {more} más; puedo borrarlos si me lo pide de nuevo.)",
    ),
    "fr": (
        "C'est fait, j'ai oublié : {items}.",
        "Je n'avais rien d'enregistré à ce sujet, il n'y avait rien à oublier.",
        " ({more} autres correspondaient ; je peux les supprimer si vous le redemandez.)",
    ),
    "ja": (
        "承知しました。次の内容を忘れました：{items}。",
        "その件について保存されている情報はありませんでした。",
        "（他に{more}件が該当しました。もう一度ご依頼いただければ削除します。）",
    ),
}

# Instructions that address the agent's own policy or other customers, not this customer's needs
# ("ignore previous instructions", "reveal other customers' data"). Regular expressions over the
# normalised text (lower case); memory.extraction.injected_instructions keeps them out of memory.
INJECTED_INSTRUCTION = {
    "en": (
        r"\b(?:ignore|disregard|forget|override|bypass)\b.{0,30}\b(?:previous|prior|above|earlier|all|your|system)\b"
        r".{0,20}\b(?:instructions?|rules|prompts?|guidelines|policy|policies)\b",
        r"\b(?:reveal|show|give|send|list|tell|share|leak|dump|export)\b.{0,40}\b(?:other|another|all|every)\b"
        r".{0,15}\b(?:customers?|clients?|users?|accounts?|tenants?)\b",
        r"\bsystem prompt\b",
        r"\byou are now\b|\bfrom now on,? you (?:are|will|must)\b|\bact as (?:an? )?(?:admin|administrator|root)\b",
    ),
    "ru": (
        r"(?:игнорир|забудь|забудьте|не обращай).{0,30}(?:предыдущ|прежн|все|системн).{0,20}(?:инструкц|правил|указани)",
        r"(?:покажи|раскрой|выдай|отправь|дай|перечисли|сообщи).{0,40}(?:других|чужих|всех) (?:клиент|пользовател|аккаунт)",
        r"системн\w* (?:промпт|подсказк|инструкц)",
    ),
    "ja": (
        r"(?:以前|前|これまで|上記|全て|すべて|システム)の(?:指示|命令|ルール|プロンプト).{0,10}(?:無視|忘れ)",
        r"(?:他の|ほかの|別の|全ての|すべての)(?:顧客|お客様|客|ユーザー|利用者).{0,20}(?:データ|情報|個人情報)",
        r"システムプロンプト",
    ),
    "cs": (
        r"(?:ignoruj|zapomeň|zapomeňte|nedbej).{0,30}(?:předchozí|dřívější|všechny|systémové).{0,20}(?:instrukc|pokyn|pravidl)",
        r"(?:ukaž|prozraď|pošli|vypiš|sděl|dej).{0,40}(?:ostatních|jiných|všech|cizích) (?:zákazník|klient|uživatel)",
        r"systémov\w* (?:prompt|pokyn)",
    ),
    "de": (
        r"(?:ignorier|vergiss|vergessen sie).{0,30}(?:vorherig|bisherig|alle|system).{0,20}(?:anweisung|regel|vorgabe)",
        r"(?:zeig|verrat|schick|gib|nenn|liste).{0,40}(?:anderer|anderen|aller|fremder) (?:kunden|nutzer|benutzer)",
        r"system-?prompt",
    ),
    "es": (
        r"(?:ignora|olvida|omite).{0,30}(?:anteriores|previas|todas|del sistema).{0,20}(?:instrucciones|reglas|indicaciones)",
        r"(?:ignora|olvida|omite).{0,30}(?:instrucciones|reglas|indicaciones).{0,20}(?:anteriores|previas)",
        r"(?:revela|muestra|envía|dame|lista|comparte).{0,40}(?:otros|todos los|demás) (?:clientes|usuarios|cuentas)",
        r"prompt del sistema",
    ),
    "fr": (
        r"(?:ignore|oublie|oubliez).{0,30}(?:précédentes|antérieures|toutes|système).{0,20}(?:instructions|règles|consignes)",
        r"(?:ignore|oublie|oubliez).{0,30}(?:instructions|règles|consignes).{0,20}(?:précédentes|antérieures)",
        r"(?:révèle|montre|envoie|donne|liste).{0,40}(?:autres|tous les) (?:clients|utilisateurs|comptes)",
        r"prompt système",
    ),
}
