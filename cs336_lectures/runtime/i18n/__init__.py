"""Translations: the catalogs beside a lecture, f-string templates, what in a lecture can be
translated, the translation of renderings while tracing, the `i18n` commands, and the run
messages the server sends as translatable notes."""
