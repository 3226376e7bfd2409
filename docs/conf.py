"""Sphinx configuration of the spml-mm documentation (``make docs``).

Markdown pages through MyST, as MMEngine and MMPretrain build theirs. The API
reference is generated from the docstrings (autodoc, Google style through
napoleon); the results pages are the files the benchmark tools write.
"""
import os
import os.path as osp
import sys

DOCS = osp.dirname(osp.abspath(__file__))
REPO = osp.dirname(DOCS)
sys.path.insert(0, REPO)

from spml_mm.version import __version__  # noqa: E402

project = 'spml-mm'
copyright = 'spml-mm authors'
version = release = __version__

extensions = [
    'myst_parser',
    'sphinx.ext.autodoc',
    'sphinx.ext.napoleon',
    'sphinx.ext.viewcode',
]
source_suffix = {'.md': 'markdown'}
root_doc = 'index'
exclude_patterns = ['_build', 'requirements.txt']

myst_enable_extensions = ['colon_fence']
# "## Section" anchors, so pages can link to `page.md#section`
myst_heading_anchors = 3

autodoc_member_order = 'bysource'
autodoc_typehints = 'description'
autodoc_default_options = {'show-inheritance': True}
napoleon_google_docstring = True
napoleon_numpy_docstring = False

html_theme = 'furo'
html_title = f'spml-mm {release}'

# Fragments the benchmark tools write under results/ (a table and its
# command, no title of their own): RESULTS.md assembles some, proxy.md and
# selection.md link to the others. Each becomes a page titled by its file.
RESULTS = osp.join(DOCS, 'results')


def _title_fragments(app, docname, source):
    if not docname.startswith('results/'):
        return
    text = source[0]
    if text.lstrip().startswith('# '):
        return
    if '\n## ' not in text:  # sections of a fragment RESULTS.md puts under ##
        text = text.replace('\n### ', '\n## ')
    source[0] = f'# {osp.basename(docname)}\n\n{text}'


def setup(app):
    app.connect('source-read', _title_fragments)
