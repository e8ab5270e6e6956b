"""The web table: an aiohttp app serving the table page, its API and live updates (docs/WEB.md)."""
