"""Sphinx configuration of the spml-mm documentation (``make docs``).

Markdown pages through MyST, as MMEngine and MMPretrain build theirs. The API
reference is generated from the docstrings (autodoc, Google style through
napoleon); the results pages are the files the benchmark tools write.
"""
import glob
import os
import os.path as osp
import re
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

# Model zoo: each method folder's README (configs/<method>/README.md, as
# MMPretrain keeps one per algorithm) becomes docs/model_zoo/<method>.md at
# build time, its config links pointing at the files under configs/.
ZOO = osp.join(DOCS, 'model_zoo')
LINK = re.compile(r'\]\((?![a-z]+:|#)([^)#\s]+)(#[^)\s]*)?\)')
FULL_LINK = re.compile(r'\[([^\]]*)\]\((?![a-z]+:|#)([^)#\s]+)(#[^)\s]*)?\)')


def _write_model_zoo():
    os.makedirs(ZOO, exist_ok=True)
    for readme in sorted(glob.glob(osp.join(REPO, 'configs', '*',
                                            'README.md'))):
        folder = osp.basename(osp.dirname(readme))
        with open(readme) as f:
            text = f.read()

        def link(match, folder=folder):
            target, anchor = match.group(1), match.group(2) or ''
            if target.startswith('../') and target.endswith('/README.md'):
                return f']({target.split("/")[1]}.md{anchor})'
            return f'](../../configs/{folder}/{target}{anchor})'

        text = LINK.sub(link, text)
        path = osp.join(ZOO, f'{folder}.md')
        if not osp.isfile(path) or open(path).read() != text:
            with open(path, 'w') as f:
                f.write(text)


_write_model_zoo()


def _outside_links(app, docname, source):
    """A page's links to Markdown files outside docs/: a method folder's
    README goes to its model-zoo page, the repository README to the index,
    any other such file becomes its path in the text."""
    page_dir = osp.dirname(osp.join(DOCS, docname))

    def link(match):
        text, target, anchor = match.group(1), match.group(2), \
            match.group(3) or ''
        full = osp.normpath(osp.join(page_dir, target))
        if not full.endswith('.md') or full.startswith(DOCS + osp.sep):
            return match.group(0)
        rel = osp.relpath(full, REPO)
        parts = rel.split(osp.sep)
        if len(parts) == 3 and parts[0] == 'configs' and \
                parts[2] == 'README.md':
            new = osp.join(ZOO, f'{parts[1]}.md')
        elif rel == 'README.md':
            new = osp.join(DOCS, 'index.md')
        else:
            return f'{text} (`{rel}`)'
        return f'[{text}]({osp.relpath(new, page_dir)}{anchor})'

    source[0] = FULL_LINK.sub(link, source[0])


# Pages under results/ the index lists; every other file there is a fragment
# a benchmark tool wrote (a table and its command, RESULTS.md assembles some,
# the pages link to the others): it builds as a page of its own, titled by
# its file name where it has no title, reached by links rather than the
# navigation.
RESULTS_PAGES = ('results/proxy', 'results/selection', 'results/gpu')


def _title_fragments(app, docname, source):
    if not docname.startswith('results/') or docname in RESULTS_PAGES:
        return
    text = source[0]
    if not text.lstrip().startswith('# '):
        if '\n## ' not in text:  # sections RESULTS.md puts under ##
            text = text.replace('\n### ', '\n## ')
        text = f'# {osp.basename(docname)}\n\n{text}'
    source[0] = f'---\norphan: true\n---\n{text}'


#: the user guides in reading order; pages added later follow, by name
GUIDES = ('datasets', 'custom_and_partial_data', 'teacher_scores',
          'training_and_resuming', 'preflight_and_validation',
          'distributed_and_slurm', 'mixed_precision_and_gpu',
          'validation_without_full_labels', 'label_sets',
          'failure_and_recovery',
          'label_bank_at_scale', 'benchmarks_and_analysis')


def _order_guides(app, docname, source):
    """The index's ``user_guides/*`` entry as GUIDES, then every other page
    of docs/user_guides/ (a glob would sort them by name alone)."""
    if docname != 'index':
        return
    found = sorted(osp.splitext(osp.basename(p))[0] for p in glob.glob(
        osp.join(DOCS, 'user_guides', '*.md')))
    names = [g for g in GUIDES if g in found]
    names += [n for n in found if n not in names]
    source[0] = source[0].replace(
        '\nuser_guides/*\n',
        '\n' + ''.join(f'user_guides/{n}\n' for n in names))


def setup(app):
    app.connect('source-read', _order_guides)
    app.connect('source-read', _title_fragments)
    app.connect('source-read', _outside_links)
