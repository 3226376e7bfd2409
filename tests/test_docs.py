"""The documentation site (docs/, ``make docs``): its API reference lists
every class the plugin registers, its requirements are the ``docs`` extra,
and it builds without a warning. The site is then tested as rendered: no
page shows a directive as text, a ``docs/...md`` path is a link, every
results page is reached from the navigation, and the sidebar lists each
method once (its configs' README is part of its page). The site is built
once per session in the test process (the fast tier starts no Python
process), about 20 s."""
import glob
import io
import os
import os.path as osp
import posixpath
import re
import subprocess
import traceback
from html.parser import HTMLParser

import pytest
from mmengine.registry import Registry

import spml_mm  # noqa: F401  (fills the registries)
from tests.conftest import REPO

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None


def registered_classes():
    """``module.Class`` of every spml_mm class in MMPretrain's and MMEngine's
    registries."""
    import mmengine.registry
    import mmpretrain.registry
    found = set()
    for module in (mmpretrain.registry, mmengine.registry):
        for name in dir(module):
            registry = getattr(module, name)
            if not isinstance(registry, Registry):
                continue
            for cls in registry.module_dict.values():
                if getattr(cls, '__module__', '').startswith('spml_mm'):
                    found.add(f'{cls.__module__}.{cls.__qualname__}')
    return found


#: the API reference, one page per subpackage
API_PAGES = osp.join(REPO, 'docs', 'api', '*.md')
#: a directive of an ``{eval-rst}`` block: ``.. autoclass:: module.Class``
AUTODOC = re.compile(r'^\.\. (auto\w+):: (\S+)\s*$', re.M)


def documented(kind=None):
    """``module.name`` of every object the API pages document (of the
    directive ``kind`` only, e.g. ``'autoclass'``)."""
    found = set()
    for page in glob.glob(API_PAGES):
        with open(page) as f:
            found |= {name for directive, name in AUTODOC.findall(f.read())
                      if kind in (None, directive)}
    return found


def documented_classes():
    return documented('autoclass')


def test_api_reference_lists_every_registered_class():
    registered = registered_classes()
    assert 'spml_mm.models.losses.gr.GRLoss' in registered
    assert len(registered) >= 40
    missing = registered - documented_classes()
    assert not missing, (
        f'add to docs/api/<subpackage>.md: {", ".join(sorted(missing))}')


def test_api_reference_lists_the_public_apis():
    """Every name of ``spml_mm.apis.__all__`` is on docs/api/apis.md."""
    import spml_mm.apis
    with open(osp.join(REPO, 'docs', 'api', 'apis.md')) as f:
        names = {name.rsplit('.', 1)[1]
                 for _, name in AUTODOC.findall(f.read())}
    assert set(spml_mm.apis.__all__) <= names, (
        set(spml_mm.apis.__all__) - names)


def test_api_pages_give_autodoc_to_rst():
    """An autodoc directive only works as reStructuredText: inside an
    ``{eval-rst}`` block, not as a MyST ``{autoclass}`` fence (which renders
    its output as text)."""
    for page in glob.glob(API_PAGES):
        with open(page) as f:
            text = f.read()
        assert not re.search(r'^```\{auto', text, re.M), page
        blocks = ''.join(re.findall(r'^```\{eval-rst\}\n(.*?)^```', text,
                                    re.M | re.S))
        assert len(AUTODOC.findall(blocks)) == len(AUTODOC.findall(text)), \
            page


def test_api_reference_names_only_existing_classes():
    import importlib
    unregistered = documented_classes() - registered_classes()
    # beside the registered classes, only the apis' (used from Python)
    assert {c.rsplit('.', 2)[0] for c in unregistered} <= {'spml_mm.apis'}
    for name in unregistered:
        module, cls = name.rsplit('.', 1)
        assert isinstance(getattr(importlib.import_module(module), cls),
                          type), name
    for name in documented() - documented_classes():
        module, attr = name.rsplit('.', 1)
        assert hasattr(importlib.import_module(module), attr), name


@pytest.mark.skipif(tomllib is None, reason='tomllib needs Python 3.11')
def test_docs_requirements_are_the_docs_extra():
    with open(osp.join(REPO, 'pyproject.toml'), 'rb') as f:
        extra = tomllib.load(f)['project']['optional-dependencies']['docs']
    with open(osp.join(REPO, 'docs', 'requirements.txt')) as f:
        listed = [line.strip() for line in f
                  if line.strip() and not line.startswith('#')]
    assert listed == extra


def test_no_reference_to_the_split_methods_page():
    """The methods page was split into docs/methods/*.md: no file names
    the old page."""
    tracked = subprocess.run(['git', 'ls-files'], cwd=REPO, text=True,
                             capture_output=True).stdout.split()
    if not tracked:
        pytest.skip('not a git checkout')
    stale = []
    for path in tracked:
        if not path.endswith(('.py', '.md', '.yml', '.sh', '.txt', '.toml')):
            continue
        full = osp.join(REPO, path)
        if not osp.isfile(full):
            continue
        with open(full, errors='replace') as f:
            if 'docs/' + 'methods.md' in f.read():
                stale.append(path)
    assert not stale


# -- the sources: what the rendered checks below need, checked without a build

#: Markdown written by hand that the site renders (docs/results/ and
#: docs/RESULTS.md are written by the benchmark tools)
def hand_written_pages():
    pages = [p for p in glob.glob(osp.join(REPO, 'docs', '**', '*.md'),
                                  recursive=True)
             if not p.startswith(osp.join(REPO, 'docs', 'results', ''))
             and p != osp.join(REPO, 'docs', 'RESULTS.md')]
    return pages + glob.glob(osp.join(REPO, 'configs', '*', 'README.md')) + [
        osp.join(REPO, 'README.md')]


FENCE = re.compile(r'^(```|~~~).*?^\1[ \t]*$', re.M | re.S)
MD_LINK = re.compile(r'\[[^\]]*\]\([^)]*\)')
CODE_SPAN = re.compile(r'`[^`]*`')
DOCS_PATH = re.compile(r'(?<![\w/.-])docs/[\w./-]*?\.md\b')
ONLY_A_DOCS_PATH = re.compile(r'\W*docs/[\w./-]*?\.md(#[\w-]*)?\W*')


def unlinked_docs_paths(text):
    """The ``docs/...md`` paths of Markdown ``text`` that are neither a link
    nor part of a code block or of a longer code span (a command)."""
    def blank(match):
        return re.sub(r'\S', ' ', match.group(0))

    def blank_commands(match):
        return (match.group(0) if ONLY_A_DOCS_PATH.fullmatch(
            match.group(0)[1:-1]) else blank(match))

    text = MD_LINK.sub(blank, FENCE.sub(blank, text))
    return DOCS_PATH.findall(CODE_SPAN.sub(blank_commands, text))


def test_hand_written_pages_link_the_docs_paths_they_name():
    found = {}
    for page in hand_written_pages():
        with open(page) as f:
            paths = unlinked_docs_paths(f.read())
        if paths:
            found[osp.relpath(page, REPO)] = paths
    assert not found, f'make these links: {found}'


def test_unlinked_docs_paths_finds_text_and_lone_code_spans():
    assert unlinked_docs_paths(
        'see docs/a.md and `docs/b/c.md`, not [docs/d.md](d.md), '
        '`python x.py --md docs/e.md`\n```\ncat docs/f.md\n```\n') == [
            'docs/a.md', 'docs/b/c.md']


def included_readmes():
    """``configs/<method>/README.md`` -> the pages of docs/methods/ that
    include it (``{include}``)."""
    found = {}
    for page in glob.glob(osp.join(REPO, 'docs', 'methods', '*.md')):
        with open(page) as f:
            for target in re.findall(r'^```\{include\}\s+(\S+)', f.read(),
                                     re.M):
                readme = osp.relpath(
                    osp.normpath(osp.join(osp.dirname(page), target)), REPO)
                found.setdefault(readme, []).append(
                    osp.relpath(page, REPO))
    return found


def test_each_method_readme_is_part_of_one_method_page():
    included = included_readmes()
    readmes = sorted(osp.relpath(p, REPO) for p in glob.glob(
        osp.join(REPO, 'configs', '*', 'README.md')))
    assert len(readmes) >= 13
    for readme in readmes:
        assert len(included.get(readme, ())) == 1, (readme, included.get(
            readme))
    assert not os.path.isdir(osp.join(REPO, 'docs', 'model_zoo')) or \
        'model_zoo' not in open(osp.join(REPO, 'docs', 'index.md')).read()


# -- the site as rendered


class _PageText(HTMLParser):
    """The text of a built page's article, in pieces: ``text`` outside
    links and code, ``codes`` (each inline code, outside links),
    ``raw`` (all of it), the sidebar's links and the article's headings."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.text, self.codes, self.raw = [], [], []
        self.sidebar, self.headings = [], []
        self._depth = {'a': 0, 'pre': 0, 'article': 0}
        self._code = None
        self._sidebar = 0
        self._link = None
        self._heading = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in self._depth:
            self._depth[tag] += 1
        if tag == 'div' and 'sidebar-tree' in (attrs.get('class') or ''):
            self._sidebar = 1
        elif tag == 'div' and self._sidebar:
            self._sidebar += 1
        if tag == 'a' and self._sidebar:
            self._link = [attrs.get('href', ''), '']
        if tag == 'code' and self._code is None:
            self._code = []
        if tag in ('h1', 'h2', 'h3') and self._depth['article']:
            self._heading = []

    def handle_endtag(self, tag):
        if tag in self._depth:
            self._depth[tag] -= 1
        if tag == 'div' and self._sidebar:
            self._sidebar -= 1
        if tag == 'a' and self._link is not None:
            self.sidebar.append((self._link[0], self._link[1].strip()))
            self._link = None
        if tag == 'code' and self._code is not None:
            if not self._depth['a'] and not self._depth['pre']:
                self.codes.append(''.join(self._code))
            self._code = None
        if tag in ('h1', 'h2', 'h3') and self._heading is not None:
            self.headings.append(''.join(self._heading).strip(' \u00b6'))
            self._heading = None

    def handle_data(self, data):
        if self._link is not None:
            self._link[1] += data
        if not self._depth['article']:
            return
        if self._heading is not None:
            self._heading.append(data)
        self.raw.append(data)
        if self._code is not None:
            self._code.append(data)
        elif not self._depth['a'] and not self._depth['pre']:
            self.text.append(data)


def built_pages(html):
    """Path (relative, with /) -> parsed text of every page of the site
    built into ``html``, less Sphinx's own (index, search, the highlighted
    sources)."""
    pages = {}
    for path in glob.glob(osp.join(html, '**', '*.html'), recursive=True):
        rel = osp.relpath(path, html).replace(osp.sep, '/')
        if rel.startswith('_') or rel in ('genindex.html', 'search.html',
                                          'py-modindex.html'):
            continue
        parser = _PageText()
        with open(path, encoding='utf-8') as f:
            parser.feed(f.read())
        pages[rel] = parser
    return pages


#: directive text that shows when a directive was not run: rST autodoc
#: written where MyST reads it, or its output taken as Markdown
RAW_DIRECTIVE = re.compile(r'\.\. py:|\.\. auto|```\{auto|:param ')


def raw_directives(pages):
    return {rel: RAW_DIRECTIVE.findall(''.join(page.raw))
            for rel, page in pages.items()
            if RAW_DIRECTIVE.search(''.join(page.raw))}


def docs_paths_as_text(pages):
    """Per page, the ``docs/...md`` paths shown as text, not as a link: in
    the text, or as an inline code of the path alone. A path followed by
    ``": "`` is a message quoted from a tool (``docs/results/gpu.md:
    differs from ...``), not a reference."""
    found = {}
    for rel, page in pages.items():
        paths = [m.group(0) for m in re.finditer(
            r'(?<![\w/.-])docs/[\w./-]*?\.md\b(?!: )', ''.join(page.text))]
        paths += [c.strip() for c in page.codes
                  if ONLY_A_DOCS_PATH.fullmatch(c)]
        if paths:
            found[rel] = paths
    return found


def reached_pages(html):
    """The pages reached from the index through the navigation and the
    links of the pages on the way."""
    href = re.compile(r'href="([^"#?:]+\.html)')
    seen, todo = set(), ['index.html']
    while todo:
        rel = todo.pop()
        if rel in seen or not osp.isfile(osp.join(html, rel)):
            continue
        seen.add(rel)
        with open(osp.join(html, rel), encoding='utf-8') as f:
            for target in href.findall(f.read()):
                todo.append(posixpath.normpath(posixpath.join(
                    posixpath.dirname(rel), target)))
    return seen


def unreached_results(html):
    results = ['RESULTS.html'] + sorted(
        'results/' + osp.basename(p)
        for p in glob.glob(osp.join(html, 'results', '*.html')))
    reached = reached_pages(html)
    return [page for page in results if page not in reached]


def methods_listed_twice(pages):
    """Each method (a method folder's README title up to its colon, e.g.
    ``AN`` or ``GR loss``) named by more than one entry of the sidebar, a
    page listed twice there, or a README on no page or on several."""
    sidebar = pages['index.html'].sidebar
    twice = [href for href, _ in sidebar
             if [h for h, _ in sidebar].count(href) > 1]
    for readme in sorted(glob.glob(osp.join(REPO, 'configs', '*',
                                            'README.md'))):
        with open(readme) as f:
            title = f.readline().lstrip('# ').strip()
        name = title.split(':')[0]
        entries = [text for _, text in sidebar
                   if re.search(rf'(?<![\w-]){re.escape(name)}(?![\w-])',
                                text)]
        if len(entries) > 1:
            twice.append(f'{name}: {entries}')
        on = [rel for rel, page in pages.items() if title in page.headings]
        if len(on) != 1:
            twice.append(f'{title}: on {on or "no page"}')
    return twice


def build_site(html):
    """Build the site (docs/) into ``html`` in this process, as ``make docs``
    does (every warning reported, an error caught): the warnings and errors
    as text, empty if none."""
    from sphinx.application import Sphinx
    from sphinx.util.docutils import docutils_namespace, patch_docutils
    docs = osp.join(REPO, 'docs')
    doctrees = osp.join(osp.dirname(html), 'doctrees')
    warnings = io.StringIO()
    try:
        # the roles and directives Sphinx registers in docutils are undone
        # on leaving (as sphinx-build does)
        with patch_docutils(docs), docutils_namespace():
            app = Sphinx(docs, docs, html, doctrees, 'html', status=None,
                         warning=warnings, freshenv=True)
            app.build(force_all=True)
    except Exception:  # an extension's or a page's error stops the build
        warnings.write(traceback.format_exc())
    return re.sub(r'\x1b\[[0-9;]*m', '', warnings.getvalue())  # colours


@pytest.fixture(scope='session')
def docs_build(tmp_path_factory):
    """The site built once per session, in this process (the fast tier
    starts no Python process): (its warnings and errors as text, the html
    folder). ``make test`` installs the docs requirements."""
    for module in ('sphinx', 'myst_parser', 'furo'):
        try:
            __import__(module)
        except ImportError:
            pytest.fail(f'{module} is missing: pip install -c constraints.txt'
                        ' -r docs/requirements.txt (make test does)')
    html = str(tmp_path_factory.mktemp('docs') / 'html')
    return build_site(html), html


@pytest.fixture(scope='session')
def docs_html(docs_build):
    warnings, html = docs_build
    if not osp.isfile(osp.join(html, 'index.html')):
        pytest.fail(f'the site did not build:\n{warnings[-3000:]}')
    return html


@pytest.fixture(scope='session')
def docs_pages(docs_html):
    return built_pages(docs_html)


def test_docs_build_without_a_warning(docs_build):
    warnings, html = docs_build
    assert not warnings, f'make docs fails:\n{warnings[-3000:]}'
    for page in ('api/index.html', 'api/models.html', 'api/apis.html',
                 'user_guides/datasets.html', 'methods/grloss.html'):
        assert osp.isfile(osp.join(html, page)), page


def test_no_page_shows_a_directive_as_text(docs_html, docs_pages):
    pages = docs_pages
    assert 'api/models.html' in pages
    assert not raw_directives(pages)
    # the API pages rendered the classes: signatures and parameter lists
    with open(osp.join(docs_html, 'api', 'models.html')) as f:
        models = f.read()
    assert 'id="spml_mm.models.losses.gr.GRLoss"' in models
    assert models.count('class="sig ') >= 25


def test_docs_paths_are_links(docs_pages):
    assert not docs_paths_as_text(docs_pages)


def test_every_results_page_is_reached_from_the_navigation(docs_html):
    assert osp.isfile(osp.join(docs_html, 'results', 'accuracy.html'))
    assert not unreached_results(docs_html)


def test_the_sidebar_lists_each_method_once(docs_pages):
    pages = docs_pages
    assert any(href == 'methods/grloss.html'
               for href, _ in pages['index.html'].sidebar)
    assert not methods_listed_twice(pages)


def test_readme_is_short_and_starts_with_what_a_newcomer_runs():
    with open(osp.join(REPO, 'README.md')) as f:
        lines = f.read().splitlines()
    assert len(lines) <= 250
    first_screen = '\n'.join(lines[:40])
    assert 'python tools/train.py configs/grloss/resnet50_voc.py' in \
        first_screen
    assert 'bash tools/dist_train.sh configs/grloss/resnet50_voc.py 8' in \
        first_screen
    text = '\n'.join(lines)
    for command in ('make demo', 'make test ', 'make test-all', 'make docs'):
        assert command in text, command


def test_readme_links_resolve():
    with open(osp.join(REPO, 'README.md')) as f:
        text = f.read()
    anchors = {re.sub(r'[^a-z0-9 -]', '', h.lower()).replace(' ', '-')
               for h in re.findall(r'^#+ (.+)$', text, re.M)}
    for target in re.findall(r'\]\(([^)\s]+)\)', text):
        if target.startswith(('http://', 'https://')):
            continue
        if target.startswith('#'):
            assert target[1:] in anchors, target
        else:
            assert osp.exists(osp.join(REPO, target.split('#')[0])), target
