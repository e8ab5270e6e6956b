"""Gettext catalogs, one `<lang>.po` per language (see README.md in this directory)."""
