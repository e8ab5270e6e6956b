"""The terminal's commands in the player's language: `licytuj 120`, `daj 9C 9D`, `пас`, `teklif 120`.

A chat keeps its commands in English (a word at the start of a group message that happened to be a
Polish verb would become a command there); the terminal has one reader, who types to the game only, so
it also takes the words of their language. Each word is the imperative a player would type, matching the
buttons' labels where there are any ("Pas", "Bomba", "Weź musik"); English words always work too.
"""

from __future__ import annotations

from typing import Final

from bot.i18n import Translator, parse_card_in
from core.cards import CardParseError

__all__ = ["VERBS", "again_word", "in_words", "neutral", "verbs_line", "word"]

VERBS: Final[dict[str, dict[str, str]]] = {
    "pl": {
        "licytuj": "bid",
        "pas": "pass",
        "graj": "play",
        "zagraj": "play",
        "daj": "give",
        "oddaj": "give",
        "weź": "take",
        "wez": "take",
        "odłóż": "discard",
        "odloz": "discard",
        "kontrakt": "contract",
        "sprzedaj": "sell",
        "ciemno": "blind",
        "bomba": "bomb",
        "poddaj": "concede",
        "pełzanie": "crawl",
        "karty": "hand",
        "stół": "table",
        "stol": "table",
        "wynik": "score",
        "zasady": "rules",
        "język": "lang",
        "jeszcze": "again",
        "pomoc": "help",
        "koniec": "quit",
    },
    "ru": {
        "ставка": "bid",
        "пас": "pass",
        "ход": "play",
        "ходи": "play",
        "отдай": "give",
        "снеси": "discard",
        "возьми": "take",
        "взять": "take",
        "контракт": "contract",
        "продать": "sell",
        "втёмную": "blind",
        "втемную": "blind",
        "бомба": "bomb",
        "сдаться": "concede",
        "ползком": "crawl",
        "карты": "hand",
        "стол": "table",
        "счёт": "score",
        "счет": "score",
        "правила": "rules",
        "язык": "lang",
        "ещё": "again",
        "еще": "again",
        "помощь": "help",
        "выход": "quit",
    },
    "uk": {
        "ставка": "bid",
        "пас": "pass",
        "хід": "play",
        "ходи": "play",
        "віддай": "give",
        "знеси": "discard",
        "візьми": "take",
        "взяти": "take",
        "контракт": "contract",
        "продати": "sell",
        "наосліп": "blind",
        "бомба": "bomb",
        "здатися": "concede",
        "повзком": "crawl",
        "карти": "hand",
        "стіл": "table",
        "рахунок": "score",
        "правила": "rules",
        "мова": "lang",
        "ще": "again",
        "допомога": "help",
        "вихід": "quit",
    },
    "et": {
        "paku": "bid",
        "pass": "pass",
        "käi": "play",
        "kai": "play",
        "anna": "give",
        "pane": "discard",
        "võta": "take",
        "vota": "take",
        "leping": "contract",
        "müü": "sell",
        "muu": "sell",
        "pimesi": "blind",
        "pomm": "bomb",
        "loobu": "concede",
        "roomamine": "crawl",
        "kaardid": "hand",
        "laud": "table",
        "seis": "score",
        "reeglid": "rules",
        "keel": "lang",
        "uuesti": "again",
        "abi": "help",
        "lõpp": "quit",
        "lopp": "quit",
    },
    "tr": {
        "teklif": "bid",
        "pas": "pass",
        "oyna": "play",
        "ver": "give",
        "bırak": "discard",
        "birak": "discard",
        "al": "take",
        "kontrat": "contract",
        "sat": "sell",
        "kör": "blind",
        "kor": "blind",
        "bomba": "bomb",
        "pes": "concede",
        "sürünme": "crawl",
        "surunme": "crawl",
        "elim": "hand",
        "masa": "table",
        "skor": "score",
        "kurallar": "rules",
        "dil": "lang",
        "tekrar": "again",
        "yardım": "help",
        "yardim": "help",
        "çıkış": "quit",
        "cikis": "quit",
    },
}
"""Per language: a typed word (lower case) → the neutral command, or `help`/`quit` of the terminal."""

_NAMES: Final = frozenset(name for words in VERBS.values() for name in words.values())

_SHOWN: Final = ("bid", "pass", "play", "give", "take", "discard", "contract", "score", "again", "quit")
"""The commands the help names in the player's words (the first word of each)."""


YES_NO: Final = {"pl": "tak|nie", "ru": "да|нет", "uk": "так|ні", "et": "jah|ei", "tr": "evet|hayır"}
"""`yes|no` as the help writes it in each language (`bot.vocabulary` takes these words)."""


def word(lang: str, name: str) -> str:
    """The word `lang` types for the neutral command or terminal word `name` (`bid` -> `licytuj`); `name`
    itself in English or where the language has none."""
    return next((w for w, n in VERBS.get(lang, {}).items() if n == name), name)


def in_words(t: Translator, commands: str) -> str:
    """A line of the terminal's help (`bot.help.TERMINAL`, written in the neutral English commands and the
    international card notation) in the reader's words and cards: `bid 120 · pass` -> `ставка 120 · пас`,
    `give 9C JD` -> `отдай 9♣ В♦`. The line is the code's own (never a translated text)."""
    lang = t.lang
    if lang == "en":
        return commands
    parts = []
    for part in commands.split(" · "):
        tokens = part.split(" ")
        out = [word(lang, tokens[0]) if tokens[0] in _NAMES else _card(t, tokens[0])]
        for token in tokens[1:]:
            out.append(YES_NO.get(lang, token) if token == "yes|no" else _card(t, token))
        parts.append(" ".join(out))
    return " · ".join(parts)


def _card(t: Translator, token: str) -> str:
    """A card of the notation (`9C`, `q♠`) as the reader's deck writes it; any other token unchanged."""
    try:
        card = parse_card_in(token, ("en",))
    except CardParseError:
        return token
    shown = t.card(card)
    return shown.lower() if token == token.lower() and not token.isdigit() else shown


def neutral(lang: str, word: str) -> str | None:
    """The neutral command a word of `lang` names, or None when it is not one of that language's words."""
    return VERBS.get(lang, {}).get(word.lower())


def again_word(lang: str) -> str:
    """The word that asks for another game in `lang` (`again` in English)."""
    return next((w for w, name in VERBS.get(lang, {}).items() if name == "again"), "again")


def verbs_line(lang: str) -> str | None:
    """The player's words for the main commands ("licytuj 120 · pas · graj QS …"), None in English."""
    verbs = VERBS.get(lang)
    if not verbs:
        return None
    examples = {"bid": " 120", "play": " QS", "give": " 9C JD", "discard": " 9C JD", "contract": " 120"}
    words = []
    for name in _SHOWN:
        word = next((w for w, n in verbs.items() if n == name), None)
        if word is not None:
            words.append(word + examples.get(name, ""))
    return " · ".join(words)
