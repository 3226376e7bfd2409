"""--cfg-options parse as MMEngine's, except that a value keeps its inner
spaces (MMEngine's parser removed them: a data_root with a space in it
pointed at a folder the user never named)."""
import argparse
import importlib.util
import os.path as osp
import shutil

import pytest
from mmengine.config import DictAction

from spml_mm.utils import ConfigOptionsAction
from tests.conftest import REPO


def parse(action, *values):
    """The options parsed; a refused value raises ValueError with the
    parser's message (a tool prints it with its usage, exit status 2)."""
    parser = argparse.ArgumentParser(exit_on_error=False)
    parser.add_argument('--cfg-options', nargs='+', action=action)
    try:
        return parser.parse_args(['--cfg-options', *values]).cfg_options
    except argparse.ArgumentError as err:
        raise ValueError(str(err)) from None


@pytest.mark.parametrize('value', [
    '1', '0.5', 'true', 'False', 'None', 'abc', '1,2,3', '[a, b, c]',
    '[(1, 2, 3), [a, b], c]', '(1,[2,3])', '[]', "'quoted'", '"x, y"',
    ' [ 1 , 2 ] '
])
def test_values_without_inner_spaces_parse_as_mmengine(value):
    assert parse(ConfigOptionsAction, f'k={value}') == parse(
        DictAction, f'k={value}')


def test_inner_spaces_are_kept():
    assert parse(DictAction, 'a=/data/my data/voc') == {
        'a': '/data/mydata/voc'}
    assert parse(ConfigOptionsAction, 'a=/data/my data/voc',
                 'b=[my file.jpg, other one.jpg]', 'c=x (copy)') == {
        'a': '/data/my data/voc',
        'b': ['my file.jpg', 'other one.jpg'],
        'c': 'x (copy)'
    }
    with pytest.raises(ValueError, match='unbalanced brackets'):
        parse(ConfigOptionsAction, 'a=[1, (2]')


@pytest.mark.parametrize('value', [
    "dict(type='Resize', scale=4)",
    "[dict(type='LoadImageFromFile'), dict(type='Resize', scale=4)]"])
def test_an_expression_is_refused_with_the_ways_to_set_it(value):
    """MMEngine's parser recursed on a comma inside a call until Python's
    limit (RecursionError, no word of the value)."""
    with pytest.raises(RecursionError):
        parse(DictAction, f'k={value}')
    # the first expression of a list is named
    with pytest.raises(ValueError, match=r"dict\(type='(Resize', scale=4|"
                       r"LoadImageFromFile')\) is an expression, which is "
                       r'not parsed: set its keys one by one \(KEY.SUBKEY=VALUE'):
        parse(ConfigOptionsAction, f'k={value}')


@pytest.mark.parametrize('value', [
    "dict(type='ANLoss')", "[dict(type='ANLoss')]", "{'type': 'ANLoss'}",
    'dict()'])
def test_an_expression_mmengine_keeps_as_a_string_is_refused(value):
    """Without a comma MMEngine kept the expression as a string, and the run
    failed later on it as a raw TypeError (issue 58)."""
    kept = parse(DictAction, f'model.head.loss={value}')['model.head.loss']
    assert 'ANLoss' in str(kept) or value == 'dict()'
    with pytest.raises(ValueError, match=r'is an expression, which is not '
                       r'parsed: set its keys one by one'):
        parse(ConfigOptionsAction, f'model.head.loss={value}')
    # a value that only holds brackets stays a string
    assert parse(ConfigOptionsAction, 'a=run (dict) 2') == {'a': 'run (dict) 2'}


def test_check_dataset_finds_a_data_root_with_spaces(tiny_demo, tmp_path,
                                                     capsys):
    """Through a tool's command line: the demo under 'my data'."""
    root = str(tmp_path / 'my data' / 'demo')
    shutil.copytree(tiny_demo, root)
    spec = importlib.util.spec_from_file_location(
        'check_dataset', osp.join(REPO, 'tools/check_dataset.py'))
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    assert tool.main([
        osp.join(REPO, 'configs/an/an_vgg11bn_demo.py'), '--cfg-options'
    ] + [f'{split}_dataloader.dataset.data_root={root}'
         for split in ('train', 'val', 'test')]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith('0 problem(s)')
