"""Cards, ranks, points and the card notation (RULES.md section 1)."""

from __future__ import annotations

import pytest

from core.cards import (
    CARD_NAMES,
    CARD_POINTS,
    DECK_SIZE,
    FULL_DECK,
    TOTAL_CARD_POINTS,
    CardParseError,
    Rank,
    Suit,
    card,
    card_name,
    cards_of,
    format_cards,
    iter_cards,
    mask_of,
    parse_card,
    points_of,
)


def test_deck_has_24_cards_worth_120() -> None:
    """RULES.md: "Deck: 24 cards ... All cards together are worth 120." """
    assert DECK_SIZE == 24
    assert len(set(CARD_NAMES)) == 24
    assert sum(CARD_POINTS) == TOTAL_CARD_POINTS == 120
    assert points_of(FULL_DECK) == 120


@pytest.mark.parametrize(
    ("rank", "points"),
    [(Rank.NINE, 0), (Rank.JACK, 2), (Rank.QUEEN, 3), (Rank.KING, 4), (Rank.TEN, 10), (Rank.ACE, 11)],
)
def test_card_points_by_rank(rank: Rank, points: int) -> None:
    """RULES.md: "ranks from low to high `9 J Q K 10 A`, worth `0 2 3 4 10 11`." """
    for suit in Suit:
        assert CARD_POINTS[card(rank, suit)] == points


def test_rank_order_within_a_suit_is_9_j_q_k_10_a() -> None:
    """RULES.md: "ranks from low to high `9 J Q K 10 A`" (the ten ranks between king and ace)."""
    for suit in "CSHD":
        order = [parse_card(r + suit) for r in ("9", "J", "Q", "K", "10", "A")]
        assert order == sorted(order)


@pytest.mark.parametrize(
    ("token", "name"),
    [
        ("9C", "9C"),
        ("jd", "JD"),
        ("QS", "QS"),
        ("kH", "KH"),
        ("10h", "10H"),
        ("TH", "10H"),
        ("th", "10H"),
        ("AD", "AD"),
        ("q♠", "QS"),
        ("10♥", "10H"),
        ("A♣", "AC"),
        ("k♦", "KD"),
        ("Q♤", "QS"),
        (" 9c ", "9C"),
    ],
)
def test_card_notation_accepts_case_t_and_suit_symbols(token: str, name: str) -> None:
    """RULES.md: "rank + suit letter, case-insensitive: `9C JD QS KH 10H AD`; `T` is accepted for 10 and the
    suit symbols ♣♠♥♦ for the letters." """
    assert card_name(parse_card(token)) == name


@pytest.mark.parametrize("token", ["", "H", "1H", "11H", "QX", "10", "KK", "AH!", "Q H H", "ZH"])
def test_card_notation_refuses_non_cards_naming_the_token(token: str) -> None:
    """ENGINE.md: "It raises `CardParseError` (a `ValueError` naming the token)." """
    with pytest.raises(CardParseError) as info:
        parse_card(token)
    assert isinstance(info.value, ValueError)
    assert repr(token) in str(info.value)


def test_localized_rank_letters_are_accepted_through_aliases() -> None:
    """RULES.md: "The chat interfaces also accept the localized rank letters of each supported language."
    (Polish: D for dama, W for walet, K for król.)"""
    aliases = {"D": Rank.QUEEN, "W": Rank.JACK}
    assert card_name(parse_card("dh", aliases)) == "QH"
    assert card_name(parse_card("W♠", aliases)) == "JS"
    with pytest.raises(CardParseError):
        parse_card("WS")


def test_masks_round_trip_in_suit_then_rank_order() -> None:
    """A set of cards is a bit mask; `cards_of` lists it ascending (by suit, then rank)."""
    cards = [parse_card(t) for t in ("AD", "9C", "KH", "10S")]
    mask = mask_of(cards)
    assert cards_of(mask) == tuple(sorted(cards))
    assert list(iter_cards(mask)) == sorted(cards)
    assert format_cards(mask) == "9C 10S KH AD"
    assert cards_of(FULL_DECK) == tuple(range(24))
    assert points_of(mask) == 0 + 11 + 4 + 10
