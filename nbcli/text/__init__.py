"""Text columns of words: tokenising, vocabularies and sparse document-term counts.

>>> from nbcli.text import TextVectorizer
>>> vec = TextVectorizer().fit(["free money now", "meeting at noon"])
>>> vec.get_feature_names_out().tolist()
['at', 'free', 'meeting', 'money', 'noon', 'now']

NumPy and SciPy only (polars, when installed, makes tokenising faster and
gives the same counts); no file I/O, no printing.
"""

from nbcli.text.tally import TermTally
from nbcli.text.tokens import DEFAULT_TOKEN_PATTERN, DocTermCounts, TokenOptions, count_terms
from nbcli.text.vectorizer import TextVectorizer
from nbcli.text.vocabulary import (
    TermStats,
    Transformed,
    Vocabulary,
    decode_text_array,
    encode_text_array,
    to_csr,
)

__all__ = [
    "DEFAULT_TOKEN_PATTERN",
    "DocTermCounts",
    "TermStats",
    "TermTally",
    "TextVectorizer",
    "TokenOptions",
    "Transformed",
    "Vocabulary",
    "count_terms",
    "decode_text_array",
    "encode_text_array",
    "to_csr",
]
