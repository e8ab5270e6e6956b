"""The catalogs are complete: every message of the code is translated in every language, no catalog entry
is left over, placeholders and markup match, and card names read back as the cards they name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

from bot.i18n import LANGUAGES, parse_card_in, translator
from bot.markup import parse

ROOT = Path(__file__).resolve().parents[2]
LOCALES = ROOT / "bot" / "locales"
KEYWORDS = {"_": None, "N_": None, "ngettext": (1, 2), "gettext": None}
IGNORED = ("storage/", "ops/")
PLACEHOLDER = re.compile(r"\{(\w*)\}")


def extracted() -> set[str | tuple[str, ...]]:
    """Messages marked in the code, as `pybabel extract -F bot/locales/babel.cfg` finds them (the service,
    the terminal, the Telegram adapter and the web table share these catalogs; Discord has its own)."""
    found: set[str | tuple[str, ...]] = set()
    for where in (
        ROOT / "bot",
        ROOT / "adapters" / "console",
        ROOT / "adapters" / "telegram",
        ROOT / "adapters" / "web",
    ):
        for filename, _, message, _, _ in extract_from_dir(
            str(where), method_map=[("**.py", "python")], keywords=KEYWORDS, strip_comment_tags=True
        ):
            if any(part in filename for part in IGNORED):
                continue
            found.add(message)
    return found


def catalog(lang: str) -> Catalog:
    with (LOCALES / f"{lang}.po").open("rb") as fh:
        return read_po(fh, locale=lang)


MESSAGES = extracted()


def test_the_code_has_messages() -> None:
    assert len(MESSAGES) > 150
    assert "It is not your turn." in MESSAGES


@pytest.mark.parametrize("lang", LANGUAGES)
def test_catalog_is_complete_and_has_nothing_unused(lang: str) -> None:
    cat = catalog(lang)
    ids = {m.id for m in cat if m.id}
    assert not cat.obsolete, f"{lang}: obsolete entries"
    missing = sorted(map(str, MESSAGES - ids))
    assert not missing, f"{lang}: untranslated (missing) messages: {missing}"
    unused = sorted(map(str, ids - MESSAGES))
    assert not unused, f"{lang}: catalog entries no code uses: {unused}"
    for m in cat:
        if not m.id:
            continue
        assert not m.fuzzy, f"{lang}: fuzzy {m.id!r}"
        strings = m.string if isinstance(m.string, tuple) else (m.string,)
        assert strings and all(s.strip() for s in strings), f"{lang}: untranslated {m.id!r}"
        if isinstance(m.id, tuple):
            assert len(strings) == cat.num_plurals, f"{lang}: plural forms of {m.id!r}"
        source = m.id if isinstance(m.id, str) else m.id[1]
        for s in strings:
            assert set(PLACEHOLDER.findall(s)) == set(PLACEHOLDER.findall(source)), (lang, m.id, s)
            assert s.count("**") == source.count("**"), (lang, m.id, s)
            assert s.count("/back") == source.count("/back") and s.count("/new") == source.count("/new")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_translations_are_real(lang: str) -> None:
    """Apart from English, most messages differ from the English text (no copied placeholders)."""
    cat = catalog(lang)
    same = [m.id for m in cat if m.id and isinstance(m.id, str) and m.string == m.id]
    if lang == "en":
        assert len(same) == len(MESSAGES) - 1  # all but the plural message
    else:
        allowed = {"{seconds} s", "Bomba", "bomb", "bolt", "Pass", "pass", "Trump: {suit}", "Bomb", "Total"}
        suspicious = [s for s in same if s not in allowed]
        assert len(suspicious) <= 3, f"{lang}: not translated? {suspicious}"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_cards_read_back_in_every_language(lang: str) -> None:
    t = translator(lang)
    labels = t.card_labels
    assert len(set(labels)) == 24
    for card, label in enumerate(labels):
        assert parse_card_in(label, (lang,)) == card
        assert parse_card_in(label.lower(), (lang,)) == card


@pytest.mark.parametrize("lang", LANGUAGES)
def test_translated_markup_parses(lang: str) -> None:
    t = translator(lang)
    for message in MESSAGES:
        text = t._(message) if isinstance(message, str) else t.ngettext(message[0], message[1], 3)
        spans = parse(text)
        assert "".join(s.text for s in spans).strip()


DISCORD = ROOT / "adapters" / "discord"


def discord_messages() -> set[str]:
    """The Discord adapter's own messages (`N_` in adapters/discord: labels, notes, command descriptions)."""
    found: set[str] = set()
    for _, _, message, _, _ in extract_from_dir(
        str(DISCORD), method_map=[("**.py", "python")], keywords={"N_": None}, strip_comment_tags=True
    ):
        if isinstance(message, str):
            found.add(message)
    return found


@pytest.mark.parametrize("lang", [lang for lang in LANGUAGES if lang != "en"])
def test_the_discord_catalogs_are_complete(lang: str) -> None:
    """Every text of the Discord adapter is translated (a missing one would show English), with the
    placeholders of the English text, and no entry is left over."""
    wanted = discord_messages()
    assert "My hand" in wanted and "Play the card game 1000" in wanted
    with (DISCORD / "locales" / f"{lang}.po").open("rb") as fh:
        cat = read_po(fh, locale=lang)
    ids = {m.id for m in cat if m.id}
    assert not sorted(wanted - ids), f"{lang}: missing {sorted(wanted - ids)}"
    assert not sorted(ids - wanted), f"{lang}: unused {sorted(map(str, ids - wanted))}"
    for m in cat:
        if m.id:
            assert isinstance(m.string, str) and m.string.strip() and not m.fuzzy, (lang, m.id)
            assert set(PLACEHOLDER.findall(m.string)) == set(PLACEHOLDER.findall(str(m.id))), (lang, m.id)
