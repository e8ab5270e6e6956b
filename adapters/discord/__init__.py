"""The Discord front end: slash commands under `/thousand`, buttons that survive restarts, the hand as an
ephemeral message (or a DM), the lobby and the table as messages edited in place.

The adapter is thin: `handlers` turns interactions into neutral `bot.model.Command`s for
`bot.service.Service`, and `delivery` turns the neutral messages it returns into Discord calls. See
`docs/DISCORD.md`.
"""

PLATFORM = "dc"
"""The platform in chat and user references: table ids look like `dc:<channel id>`, users `dc:<user id>`."""

NAME = "discord"
"""The front end's name in metrics, health and logs (`bot.ops`)."""
