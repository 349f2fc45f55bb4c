from streams.cli import app

app()
