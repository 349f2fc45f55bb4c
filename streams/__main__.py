from slotwise.streams.cli import app

app()
