"""boardrl: games, exact referees, agents and a reproducible pipeline to train and evaluate them."""

__version__ = "0.1.0"
