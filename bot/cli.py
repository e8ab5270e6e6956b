"""Console entry point; subcommands are added as the parts they drive land."""

import typer

app = typer.Typer(no_args_is_help=True, add_completion=False)


@app.callback()
def _root() -> None:
    """thousand: the card game 1000 for chats and terminals."""


def main() -> None:
    app()
