"""nbcli: Bayes classifiers (naive Bayes, LDA, QDA) in one log-space core, with a CLI."""

__version__ = "0.1.0"
