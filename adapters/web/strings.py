"""The words of the web table: the page's labels and the server's refusals, from the project's catalogs.

The page gets its labels from `POST /api/session` (`ui_strings`), already in the reader's language, so
it holds no text of its own (docs/WEB.md lists the keys).
"""

from __future__ import annotations

from typing import Final

from bot.i18n import N_, RANK_LETTERS, SUIT_NAMES, translator
from bot.render import PHASE_NAMES
from core.cards import SUIT_LETTERS

__all__ = ["WEB_ERRORS", "ui_strings", "web_error"]

WEB_ERRORS: Final = {
    "web_auth": N_("This link is not valid or has expired. Open the table again from the chat."),
    "web_session": N_("Your session has expired. Open the table again from the chat."),
    "web_origin": N_("This request did not come from the table page."),
    "web_rate": N_("Too many requests. Wait a moment."),
    "web_too_large": N_("The request is too large."),
    "web_bad_request": N_("The request could not be read."),
    "web_no_table": N_("This table no longer exists."),
    "web_no_replay": N_("This game can no longer be replayed."),
    "web_no_play": N_("Public games are not available on this bot."),
    "web_player": N_("Your player pass is not valid or has expired. Enter your name again."),
    "web_name": N_("A name is 1 to 32 characters: no links, no @handles, no control characters."),
    "web_options": N_("Choose the rules, the number of players and the pace from the lists."),
    "web_too_late": N_("Too late to cancel: a table was found for you first."),
    "web_found": N_("A table was found: your game is starting."),
}

_UI: Final = {
    "open_table": N_("Open table"),
    "your_turn": N_("Your turn"),
    "waiting_for": N_("Waiting for {name}."),
    "spectator": N_("You are watching this table."),
    "trump": N_("Trump"),
    "declarer": N_("Declarer"),
    "dealer": N_("Dealer"),
    "contract": N_("Contract"),
    "talon": N_("Talon"),
    "trick": N_("Trick"),
    "last_trick": N_("Last trick"),
    "scores": N_("Scores"),
    "score_sheet": N_("Score sheet"),
    "chart": N_("Score progress"),
    "deal": N_("Deal"),
    "total": N_("Total"),
    "barrel": N_("Barrel"),
    "pass": N_("Pass"),
    "bid": N_("Bid"),
    "marriage": N_("Marriage"),
    "give_to": N_("Give to {name}"),
    "choose_card": N_("Choose a card"),
    "choose_player": N_("Choose a player"),
    "connection_lost": N_("Connection lost."),
    "reconnecting": N_("Reconnecting…"),
    "replay": N_("Replay"),
    "review": N_("Review"),
    "previous": N_("Previous"),
    "next": N_("Next"),
    "game_over": N_("Game over"),
    "winner": N_("Winner: {names}"),
    "result_title": N_("Deal {number}: result"),
    "points": N_("Points"),
    "score": N_("Score"),
    "continue": N_("Continue"),
    "cancel": N_("Cancel"),
    "sure_concede": N_("Concede the deal? Your contract counts against you."),
    "sure_bomb": N_("Bomb the deal? It is not played and the others score for it."),
    "give_card_to": N_("give a card to {name}."),
    "computer": N_("computer"),
    "play_now": N_("Play now"),
    "your_name": N_("Your name"),
    "find_game": N_("Find a game"),
    "rules": N_("Rules"),
    "players": N_("Players"),
    "pace": N_("Pace"),
    "rating": N_("Rating"),
    "provisional": N_("provisional"),
    "games_played": N_("Games: {n}"),
    "playing_as": N_("Playing as {name}"),
    "start_computers": N_("Start with computers"),
    "keep_waiting": N_("Keep waiting"),
    "play_none": N_("Public games are not available on this bot."),
    # Issue 25: between deals, the give, the score sheet's marks and history, the page's own marks.
    "next_deal": N_("Deal {number} has begun: tap Continue to see it."),
    "give_ready": N_("tap “{button}” to give the cards, or a given card to take it back."),
    "sheet_marks": N_("✓ contract made · ✗ failed · • bomb or concession"),
    "sheet_tap": N_("Tap a deal's number to see its result."),
    "bolt": N_("bolt"),
    "away": N_("away: a computer plays for this seat"),
    "points_help": N_("Card points taken in this deal so far."),
    "points_legend": N_("“+24” by a name: card points taken in this deal so far."),
    "rating_help": N_("Rating: your public rating for these rules, after each public game."),
    "provisional_help": N_("“?”: provisional, it settles after a few games."),
    "time_left": N_("Time left for this turn"),
    "alerts_on": N_("Sound and vibration on your turn: on (tap to switch off)"),
    "alerts_off": N_("Sound and vibration on your turn: off (tap to switch on)"),
    # Issue 25: what strangers at a public table may do from the page, as in the chats.
    "safety": N_("Block or report a player"),
    "block": N_("Block"),
    "unblock": N_("Unblock"),
    "report": N_("Report"),
    "reason": N_("Reason"),
    "player": N_("Player"),
    "say": N_("Say to the table"),
}


def ui_strings(lang: str) -> dict[str, str]:
    """Every label of the page in `lang`."""
    t = translator(lang)
    out = {key: t._(message) for key, message in _UI.items()}
    out.update({f"phase.{phase}": t._(name) for phase, name in PHASE_NAMES.items()})
    out.update({f"suit.{letter}": t._(SUIT_NAMES[i]) for i, letter in enumerate(SUIT_LETTERS)})
    out["suit.A"] = t._(N_("four aces"))
    # The reader's rank letters, drawn on the page's card pictures (9 J Q K 10 A in English).
    letters = RANK_LETTERS.get(lang, RANK_LETTERS["en"])
    out.update(
        {
            f"rank.{rank}": letter
            for rank, letter in zip(("9", "J", "Q", "K", "10", "A"), letters, strict=True)
        }
    )
    return out


def web_error(lang: str, code: str) -> str | None:
    """The refusal `code` of the web table in `lang`; None when it is not one of the web's own."""
    message = WEB_ERRORS.get(code)
    return None if message is None else translator(lang)._(message)
