"""Sphinx configuration of the spml-mm documentation (``make docs``).

Markdown pages through MyST, as MMEngine and MMPretrain build theirs. The API
reference is generated from the docstrings (autodoc, Google style through
napoleon); the results pages are the files the benchmark tools write.
"""
import glob
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
# model_zoo/: the pages earlier versions generated from the method READMEs,
# now part of the methods' pages; a checkout may still hold them
exclude_patterns = ['_build', 'requirements.txt', 'model_zoo']

myst_enable_extensions = ['colon_fence']
# "## Section" anchors, so pages can link to `page.md#section`
myst_heading_anchors = 3

autodoc_member_order = 'bysource'
# ``class GRLoss(...)`` under its page's heading, the module in the index
add_module_names = False
autodoc_typehints = 'description'
autodoc_default_options = {'show-inheritance': True}
napoleon_google_docstring = True
napoleon_numpy_docstring = False

html_theme = 'furo'
html_title = f'spml-mm {release}'
# wide tables and code blocks scroll inside the text column
html_static_path = ['_static']
html_css_files = ['wide.css']

# One page per method: each page of docs/methods/ that documents a method
# folder includes its README (configs/<method>/README.md, as MMPretrain keeps
# one per algorithm: results, configs, switches, citation) with MyST's
# ``{include}``, one heading level down. The README's links are relative to
# its folder; _relink_readme makes them relative to the including page.
INCLUDE = re.compile(r'^```\{include\}\s+(\S+)\s*$', re.M)
LINK = re.compile(r'\]\((?![a-z]+:|#)([^)#\s]+)(#[^)\s]*)?\)')
FULL_LINK = re.compile(r'\[([^\]]*)\]\((?![a-z]+:|#)([^)#\s]+)(#[^)\s]*)?\)')


def _readme_pages():
    """``configs/<method>/README.md`` (absolute) -> the absolute path of
    the page of docs/methods/ that includes it."""
    pages = {}
    for page in sorted(glob.glob(osp.join(DOCS, 'methods', '*.md'))):
        with open(page) as f:
            for target in INCLUDE.findall(f.read()):
                full = osp.normpath(osp.join(osp.dirname(page), target))
                pages[full] = page
    return pages


README_PAGES = _readme_pages()


def _page_of(full):
    """Where a link to the file ``full`` goes on the site: a method
    folder's README to the page that includes it, the repository README to
    the index, any other file to itself."""
    if full in README_PAGES:
        return README_PAGES[full]
    if full == osp.join(REPO, 'README.md'):
        return osp.join(DOCS, 'index.md')
    return full


def _relink_readme(app, relative_path, parent_docname, content):
    """A method folder's README included into a page: its relative links
    (configs beside it, other READMEs, docs pages) resolve from that page."""
    full = osp.normpath(osp.join(app.srcdir, str(relative_path)))
    if full not in README_PAGES:
        return
    readme_dir = osp.dirname(full)
    page_dir = osp.dirname(README_PAGES[full])

    def link(match):
        target, anchor = match.group(1), match.group(2) or ''
        new = _page_of(osp.normpath(osp.join(readme_dir, target)))
        return f']({osp.relpath(new, page_dir)}{anchor})'

    content[0] = LINK.sub(link, content[0])


def _outside_links(app, docname, source):
    """A page's links to Markdown files outside docs/: a method folder's
    README goes to the method's page, the repository README to the index,
    any other such file becomes its path in the text."""
    page_dir = osp.dirname(osp.join(DOCS, docname))

    def link(match):
        text, target, anchor = match.group(1), match.group(2), \
            match.group(3) or ''
        full = osp.normpath(osp.join(page_dir, target))
        if not full.endswith('.md') or full.startswith(DOCS + osp.sep):
            return match.group(0)
        new = _page_of(full)
        if new == full:
            return f'{text} (`{osp.relpath(full, REPO)}`)'
        return f'[{text}]({osp.relpath(new, page_dir)}{anchor})'

    source[0] = FULL_LINK.sub(link, source[0])


#: a page named by its path in a docstring ("docs/methods/an.md", plain or
#: as ``code``), which reads as a path in ``help()``
DOC_PATH = re.compile(r'(``)?(?<![\w/.-])docs/([\w/.-]+?)\.md(?(1)``)')


def _docstring_links(app, what, name, obj, options, lines):
    """On the API pages, a docstring's ``docs/<page>.md`` links to the
    page; a doctest line keeps its text."""
    def link(match):
        page = match.group(2)
        if not osp.isfile(osp.join(DOCS, page + '.md')):
            return match.group(0)
        return f':doc:`docs/{page}.md </{page}>`'

    for i, line in enumerate(lines):
        if not line.lstrip().startswith(('>>>', '...')):
            lines[i] = DOC_PATH.sub(link, line)


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
          'label_bank_at_scale', 'benchmarks_and_analysis',
          'adding_a_method')


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
    app.connect('include-read', _relink_readme)
    app.connect('autodoc-process-docstring', _docstring_links)
