"""Corpus files on disk (and, later, the SQLite run store)."""

from .corpus import Corpus, CorpusWriter, read_corpus

__all__ = ["Corpus", "CorpusWriter", "read_corpus"]
