"""The bot author's and organiser's tools: bot.toml manifests, submission, installed bots, checks."""
