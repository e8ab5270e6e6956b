"""Gettext catalogs of the strings only the Discord front end shows (command descriptions, its own
button labels and notes), one `<lang>.po` per language; English is the source text."""
