"""Every module of spml_mm imports on its own; no module of spml_mm, of
tools or of .dev_scripts imports one that imports it back (directly or
through others); tools and .dev_scripts run in one direction: a module that
runs as a command (a runner) is imported by no other module, except by the
runner it is a part of; and the apparatus of .dev_scripts (``benchmark``,
``analysis``, ``docs_tables``) imports the package, never the reverse:
nothing in spml_mm or tools imports it."""
import ast
import os.path as osp
import subprocess
import sys
from pathlib import Path

import pytest

import spml_mm

PACKAGE = Path(spml_mm.__file__).parent
TOOLS = PACKAGE.parent / 'tools'
#: the development folder, on the path as pytest's pythonpath puts it: its
#: modules are named benchmark.x, analysis.x, docs_tables
DEV_SCRIPTS = PACKAGE.parent / '.dev_scripts'
#: the top-level names of .dev_scripts' modules
APPARATUS = ('benchmark', 'analysis', 'docs_tables')
#: runner -> the runners it runs as its parts, in its own process
PARTS = {
    # the three speed measures, one cost section
    'benchmark.speed': {
        'benchmark.speed_banks', 'benchmark.speed_iteration',
        'benchmark.speed_losses'
    },
    # the features a probe trains on, extracted as the cache tool does
    'analysis.linear_probe': {'tools.cache_features'},
}


def module_names(package=PACKAGE, root=None):
    """Every module of ``package`` (a folder), from its files (packages by
    their ``__init__``), named from ``root`` (default: the folder above
    ``package``; ``.dev_scripts`` itself for its modules)."""
    names = []
    root = package.parent if root is None else root
    for path in sorted(package.rglob('*.py')):
        parts = path.relative_to(root).with_suffix('').parts
        names.append('.'.join(parts[:-1] if parts[-1] == '__init__' else
                              parts))
    return names


def imports_in(source, name, is_package=False, modules=None):
    """The modules of ``modules`` (default: spml_mm's) that the source of
    module ``name`` imports, anywhere in it (inside functions too)."""
    modules = set(module_names() if modules is None else modules)
    here = name if is_package else name.rpartition('.')[0]
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ''
            if node.level:
                anchor = here.rsplit('.', node.level - 1)[0]
                base = f'{anchor}.{base}' if base else anchor
            found.add(base)
            # `from package import module` imports the module
            found.update(f'{base}.{a.name}' for a in node.names)
    return {m for m in found if m in modules and m != name}


def dev_module_names():
    """Every module of .dev_scripts, as it imports with .dev_scripts on the
    path (``benchmark.accuracy``, ``analysis.linear_probe``,
    ``docs_tables``)."""
    return module_names(DEV_SCRIPTS, DEV_SCRIPTS)


def is_apparatus(name):
    """Whether module ``name`` is one of .dev_scripts'."""
    return name.split('.')[0] in APPARATUS


def is_tool(name):
    """Whether module ``name`` is one of tools or of .dev_scripts."""
    return name.startswith('tools.') or is_apparatus(name)


def source_of(name):
    """The source of module ``name`` and whether it is a package."""
    root = DEV_SCRIPTS if is_apparatus(name) else PACKAGE.parent
    path = root / name.replace('.', osp.sep)
    is_package = (path / '__init__.py').exists()
    return (path / '__init__.py' if is_package else
            path.with_suffix('.py')).read_text(), is_package


def import_graph():
    """Module -> the modules of spml_mm, tools and .dev_scripts it
    imports."""
    names = module_names() + module_names(TOOLS) + dev_module_names()
    graph = {}
    for name in names:
        source, is_package = source_of(name)
        graph[name] = imports_in(source, name, is_package, names)
    return graph


def is_runner(name):
    """Whether a module runs as a command: a package's ``__main__`` or a
    module with an ``if __name__ == '__main__':`` block."""
    if name.endswith('.__main__'):
        return True
    for node in ast.parse(source_of(name)[0]).body:
        if isinstance(node, ast.If) and "'__main__'" in ast.unparse(
                node.test) and '__name__' in ast.unparse(node.test):
            return True
    return False


def find_cycles(graph):
    """Import paths that come back to a module on them."""
    cycles, done = [], set()

    def visit(name, path):
        for other in sorted(graph[name]):
            if other in path:
                cycles.append(path[path.index(other):] + [other])
            elif other not in done:
                visit(other, path + [other])
        done.add(name)

    for name in graph:
        if name not in done:
            visit(name, [name])
    return cycles


def imports_of_runners(graph):
    """(module, runner it imports) for every import of a runner that is
    not a part of the importing runner (:data:`PARTS`)."""
    runners = {name for name in graph if is_tool(name) and is_runner(name)}
    return sorted((name, other) for name, imported in graph.items()
                  for other in imported & runners
                  if other not in PARTS.get(name, ()))


def test_no_module_imports_one_that_imports_it_back():
    cycles = find_cycles(import_graph())
    assert not cycles, '\n'.join(' -> '.join(c) for c in cycles)


def wrong_floor_imports(graph):
    """(module, import) for every loss module that imports a label bank's
    module, and every label bank's module that imports ``spml_mm.datasets``:
    the losses read the banks' states from ``models/label_states.py``, and
    the teacher score hook reads a bank's score file for it."""
    losses = 'spml_mm.models.losses'
    banks = 'spml_mm.models.label_banks'
    return sorted(
        (name, other) for name, imported in graph.items()
        for other in imported
        if name.startswith(losses) and other.startswith(banks)
        or name.startswith(banks) and other.startswith('spml_mm.datasets'))


def test_losses_skip_the_banks_and_banks_skip_the_datasets():
    wrong = wrong_floor_imports(import_graph())
    assert not wrong, '\n'.join(f'{m} imports {o}' for m, o in wrong)
    # as em_loss.py once read the states from the bank's module, and the
    # teacher bank its score file from the datasets'
    assert wrong_floor_imports({
        'spml_mm.models.losses.em_loss':
        {'spml_mm.models.label_banks.label_bank'},
        'spml_mm.models.label_banks.teacher_label_bank':
        {'spml_mm.datasets.teacher_scores'},
        'spml_mm.models.losses.gr': {'spml_mm.models.label_states'},
    }) == [('spml_mm.models.label_banks.teacher_label_bank',
            'spml_mm.datasets.teacher_scores'),
           ('spml_mm.models.losses.em_loss',
            'spml_mm.models.label_banks.label_bank')]


def floors(graph, package):
    """Module of ``package`` (not a package's ``__init__``) -> its floor:
    1 for a module that imports no other module of ``package``, else one
    above the highest floor it imports."""
    modules = {name for name in graph if name.startswith(package + '.')
               and not (PACKAGE.parent / name.replace('.', osp.sep) /
                        '__init__.py').exists()}
    found = {}

    def floor(name):
        if name not in found:
            found[name] = 1 + max((floor(other) for other in graph[name]
                                   if other in modules), default=0)
        return found[name]

    for name in modules:
        floor(name)
    return found


def test_models_stand_on_at_most_five_floors():
    """A loss reads as its equation beside its module (gr.py, gpr.py), not
    a tower of layers; the states and the epoch protocol are floor 1."""
    found = floors(import_graph(), 'spml_mm.models')
    top = max(found.values())
    assert top <= 5, '\n'.join(f'{n}: {f}' for n, f in sorted(
        found.items(), key=lambda item: item[1]) if f > 3)
    for name in ('label_states', 'epoch_scheduled'):
        assert found[f'spml_mm.models.{name}'] == 1
    # a chain of three: a -> b -> c
    chain = {'p.a': {'p.b'}, 'p.b': {'p.c'}, 'p.c': set()}
    assert floors(chain, 'p') == {'p.a': 3, 'p.b': 2, 'p.c': 1}


def test_tools_runs_in_one_direction():
    """Runners import shared modules, shared modules never a runner (e.g.
    .dev_scripts/docs_tables.py reads the result pages' renderers, never the
    tools that measure); .dev_scripts/benchmark/common.py imports no other
    module of tools or .dev_scripts."""
    graph = import_graph()
    assert {'docs_tables', 'benchmark.accuracy', 'benchmark.gpu_run.__main__',
            'analysis.linear_probe', 'tools.train'} <= {
                n for n in graph if is_tool(n) and is_runner(n)}
    wrong = imports_of_runners(graph)
    assert not wrong, '\n'.join(f'{m} imports the runner {r}'
                                for m, r in wrong)
    assert not {m for m in graph['benchmark.common'] if is_tool(m)}


def apparatus_imports(source):
    """The modules of .dev_scripts (by their top-level name, whether or not
    such a module exists) that ``source`` imports, anywhere in it."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found.add(node.module or '')
    return {m for m in found if is_apparatus(m)}


def test_the_package_and_tools_never_import_dev_scripts():
    """.dev_scripts imports spml_mm (and runs tools/*.py), never the
    reverse: spml_mm and tools ship in the wheel, .dev_scripts does not."""
    names = module_names() + module_names(TOOLS)
    assert 'spml_mm.models' in names and 'tools.train' in names
    wrong = sorted((name, m) for name in names
                   for m in apparatus_imports(source_of(name)[0]))
    assert not wrong, '\n'.join(f'{n} imports {m} (.dev_scripts)'
                                for n, m in wrong)
    # the check sees an import at the top and one inside a function
    assert apparatus_imports(
        'from benchmark.common import REPO\nimport os\n'
        'def f():\n    import docs_tables\n    from analysis import x\n'
    ) == {'benchmark.common', 'docs_tables', 'analysis'}
    assert not apparatus_imports('from .benchmark import x\nimport tools\n')
    # and the apparatus is walked as the modules it imports as
    assert {'benchmark.common', 'benchmark.pages.accuracy',
            'analysis.linear_probe', 'docs_tables'} <= set(dev_module_names())


def test_the_check_sees_a_runner_imported():
    """As docs_tables once imported benchmark.accuracy to render
    its page, and speed_gpu and head_profile each other."""
    graph = {'docs_tables': {'benchmark.accuracy'},
             'benchmark.accuracy': {'benchmark.common'},
             'benchmark.common': set()}
    assert imports_of_runners(graph) == [
        ('docs_tables', 'benchmark.accuracy')]
    assert not imports_of_runners({'benchmark.speed': {
        'benchmark.speed_losses'}, 'benchmark.speed_losses':
        set()})


def test_the_check_sees_cycles_through_imports_in_functions():
    """As GR's once was: gr_loss.py imported the unified loss at the top and
    the unified loss imported gr_loss.py inside its forward."""
    losses = 'spml_mm.models.losses'
    then = [f'{losses}.gr_loss', f'{losses}.unified_spml_loss']
    graph = dict(
        gr=imports_in('from .unified_spml_loss import UnifiedSPMLLoss\n',
                      f'{losses}.gr_loss', modules=then),
        unified=imports_in(
            'def forward():\n    from .gr_loss import gr_loss\n',
            f'{losses}.unified_spml_loss', modules=then))
    assert graph == dict(gr={f'{losses}.unified_spml_loss'},
                         unified={f'{losses}.gr_loss'})
    graph = {f'{losses}.gr_loss': graph['gr'],
             f'{losses}.unified_spml_loss': graph['unified']}
    assert find_cycles(graph) == [[
        f'{losses}.gr_loss', f'{losses}.unified_spml_loss',
        f'{losses}.gr_loss'
    ]]
    # `from package import module`, relative to a package's __init__
    assert imports_in('from . import datasets\n', 'spml_mm',
                      is_package=True) == {'spml_mm.datasets'}


@pytest.mark.slow
def test_every_module_imports_in_a_fresh_interpreter():
    """Every module imports, modules that the package's ``__init__`` files
    do not reach included. Importing any module first runs
    ``spml_mm/__init__.py``, which imports every subpackage in one order,
    so one fresh interpreter sees what a user's first import would; import
    cycles, whatever the order, are the graph test's."""
    script = '''
import importlib, sys, traceback
failed = []
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except Exception:
        failed.append(name + ':\\n' + traceback.format_exc())
print('\\n'.join(failed))
sys.exit(bool(failed))
'''
    proc = subprocess.run([sys.executable, '-c', script, *module_names()],
                          capture_output=True, text=True,
                          cwd=PACKAGE.parent)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.slow
def test_import_spml_mm_leaves_the_teacher_scoring_out():
    """Training reads a teacher's score file, never a teacher: the scoring
    (``spml_mm.teacher``) is loaded only by what scores, e.g.
    tools/score_teacher.py."""
    script = ('import json, sys, spml_mm\n'
              'print(json.dumps(sorted(m for m in sys.modules\n'
              "    if m.startswith('spml_mm.teacher'))))\n")
    proc = subprocess.run([sys.executable, '-c', script],
                          capture_output=True, text=True,
                          cwd=PACKAGE.parent)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == '[]'
