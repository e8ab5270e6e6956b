"""The refusals' words: the service's own and the engine's (codes of `core.errors.IllegalAction`)."""

from __future__ import annotations

from bot.i18n import N_, Translator

__all__ = ["ERRORS", "render_error"]

ERRORS = {
    # The service's own refusals.
    "unknown": N_("Unknown command. Send /help for the list."),
    "invalid_button": N_("This button is not valid."),
    "stale_button": N_("This button is out of date: the table has moved on."),
    "other_table": N_("This button belongs to another table."),
    "no_public_games": N_("Public games are not available on this bot."),
    "no_table": N_("There is no table here. Start one with /new."),
    "no_table_for_you": N_("You are not sitting at any table."),
    "many_tables": N_("You sit at several tables: send this command in the group of the game."),
    "table_exists": N_("A table is already open in this chat."),
    "not_seated": N_("You are not sitting at this table."),
    "already_seated": N_("You are already sitting at this table."),
    "table_full": N_("The table is full."),
    "not_allowed": N_("Only the table's creator or a chat admin may do that."),
    "secret_in_group": N_(
        "Cards you give or lay down stay secret: send that in your private chat with the bot, "
        "not in the group."
    ),
    "lobby_only": N_("That is only possible before the game starts."),
    "game_only": N_("That is only possible during a game."),
    "too_few_players": N_("Not enough players to start."),
    "too_many_players": N_("Too many players for these rules."),
    "no_ai_to_remove": N_("There is no computer player to remove."),
    "bad_number": N_("That is not a number."),
    "bad_card": N_("That is not a card. Write it like QS, 10H or Q♠."),
    "missing_argument": N_("Something is missing after the command."),
    "unknown_option": N_("Unknown setting or option."),
    "bad_value": N_("That value is not allowed here."),
    "unknown_preset": N_("Unknown preset. Choose polish, estonian or russian."),
    "unknown_language": N_("Unknown language. Choose en, pl, ru, uk, et or tr."),
    "unknown_level": N_("Unknown level. Choose easy, medium or hard."),
    "no_such_seat": N_("There is no such seat."),
    "not_a_human": N_("A computer already plays that seat."),
    "already_voted": N_("You have already voted to kick this player."),
    "not_away": N_("You are playing your seat already."),
    "you_are_away": N_("A computer is playing for you. Send /back to play again."),
    "not_private": N_("Send this command in the group where the table is."),
    "unavailable": N_("The game storage is temporarily unavailable. Please try again in a moment."),
    "uncertain": N_(
        "Your move may or may not have been taken: the game storage did not confirm it in time. "
        "Look at the table before playing again."
    ),
    "busy": N_("The table is busy. Please try again."),
    "internal": N_("Something went wrong on our side. Please try again."),
    "nothing_to_export": N_("There is no game to export yet."),
    "nothing_to_review": N_("There is no game to review yet."),
    "review_own_only": N_("Only a player of this table can review their own choices."),
    "review_after_deal": N_("A deal can be reviewed once it is over: no deal of this game is finished yet."),
    # The engine's refusals (codes of core.errors.IllegalAction).
    "not_your_turn": N_("It is not your turn."),
    "deal_over": N_("This deal is already over."),
    "wrong_phase": N_("That move is not possible now."),
    "must_open": N_("You open the bidding: you cannot pass now."),
    "bad_bid_step": N_("Bids go in steps of {step}."),
    "bid_too_low": N_("That bid is too low."),
    "bid_too_high": N_("You cannot bid that much with this hand."),
    "bid_needs_marriage": N_("A bid above {limit} needs a marriage in your hand."),
    "blind_bid_too_high": N_("A blind bid cannot be that high."),
    "card_not_in_hand": N_("You do not have that card."),
    "must_follow_suit": N_("You must follow suit."),
    "must_trump": N_("You must play a trump."),
    "must_beat": N_("You must beat the trick."),
    "cannot_declare": N_("You cannot declare a marriage with this lead."),
    "bad_give": N_("Give one card to each other player."),
    "bad_discard": N_("Lay down exactly two different cards."),
    "no_such_pile": N_("There is no such talon pile."),
    "no_bomb": N_("You cannot bomb now."),
    "no_concede": N_("You cannot concede now."),
    "no_crawl": N_("You cannot crawl now."),
    "no_sale": N_("The talon cannot be sold in this game."),
    "contract_too_low": N_("The contract cannot be lower than your bid."),
    "contract_too_high": N_("You cannot declare that much with this hand."),
    "game_over": N_("The game is over."),
}


def render_error(t: Translator, code: str, **values: object) -> str:
    message = ERRORS.get(code)
    if message is None:
        return t._("That move is not possible now.")
    text = t._(message)
    try:
        return text.format(**values)
    except (KeyError, IndexError):
        return text
