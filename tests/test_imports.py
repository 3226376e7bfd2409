"""Every module of spml_mm imports on its own, and no module imports one
that imports it back (directly or through others)."""
import ast
import os.path as osp
import subprocess
import sys
from pathlib import Path

import pytest

import spml_mm

PACKAGE = Path(spml_mm.__file__).parent


def module_names():
    """Every module of the package, from its files (packages by their
    ``__init__``)."""
    names = []
    for path in sorted(PACKAGE.rglob('*.py')):
        parts = path.relative_to(PACKAGE.parent).with_suffix('').parts
        names.append('.'.join(parts[:-1] if parts[-1] == '__init__' else
                              parts))
    return names


def imports_in(source, name, is_package=False):
    """The spml_mm modules that the source of module ``name`` imports,
    anywhere in it (inside functions too)."""
    modules = set(module_names())
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


def import_graph():
    """Module -> the spml_mm modules it imports."""
    graph = {}
    for name in module_names():
        path = PACKAGE.parent / name.replace('.', osp.sep)
        is_package = (path / '__init__.py').exists()
        source = (path / '__init__.py' if is_package else
                  path.with_suffix('.py')).read_text()
        graph[name] = imports_in(source, name, is_package)
    return graph


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


def test_no_module_imports_one_that_imports_it_back():
    cycles = find_cycles(import_graph())
    assert not cycles, '\n'.join(' -> '.join(c) for c in cycles)


def test_the_check_sees_cycles_through_imports_in_functions():
    """As GR's once was: gr_loss.py imported the unified loss at the top and
    the unified loss imported gr_loss.py inside its forward."""
    losses = 'spml_mm.models.losses'
    graph = dict(
        gr=imports_in('from .unified_spml_loss import UnifiedSPMLLoss\n',
                      f'{losses}.gr_loss'),
        unified=imports_in(
            'def forward():\n    from .gr_loss import gr_loss\n',
            f'{losses}.unified_spml_loss'))
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
