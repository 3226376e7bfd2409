"""The pages of docs/results, each rendered from its json: the tool that
measures writes its page through them, and ``.dev_scripts/docs_tables.py``
renders the page again to check it against its json."""
