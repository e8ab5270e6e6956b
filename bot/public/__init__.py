"""Public tables: tables of the service with no group chat, seated by the matchmaker (issue 20).

`fanout` turns what the service says to a table's group into one private message per seated person, in
their own language; `tables` opens a public table from a match; `phrases` holds the fixed phrases that
are the only words strangers exchange. See docs/SERVICE.md, "Public tables and delivery across platforms".
"""
