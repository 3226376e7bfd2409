"""``--cfg-options KEY=VALUE`` as MMEngine parses it, spaces kept."""
import argparse
import re
from typing import Any

from mmengine.config import DictAction


def _next_comma(text: str) -> int:
    """The index of the first comma outside brackets, or ``len(text)``."""
    depth = 0
    for k, char in enumerate(text):
        depth += (char in '([') - (char in ')]')
        if char == ',' and depth == 0:
            return k
    return len(text)


#: A value MMEngine would keep as the string of an expression: a call of
#: dict/list/tuple/set, or a dict literal.
_EXPRESSION = re.compile(r'^(?:(?:dict|list|tuple|set)\s*\(.*\)|\{.*\})$',
                         re.S)


def _expression_error(val: str) -> ValueError:
    return ValueError(
        f'--cfg-options value {val} is an expression, which is not '
        'parsed: set its keys one by one (KEY.SUBKEY=VALUE, '
        'KEY.0.SUBKEY=VALUE in a list) or write it in a config that '
        'inherits this one (_base_)')


class ConfigOptionsAction(DictAction):
    """MMEngine's ``DictAction`` that keeps the spaces inside a value.

    MMEngine removes every space of a value before parsing it, so
    ``data_root='/data/my data'`` became ``/data/mydata`` and the run failed
    on a folder the user never named. Here only the spaces around a value,
    its list elements and brackets are removed; lists and tuples
    (``[1, 2]``, ``a,b``, ``(1,[2,3])``), numbers, booleans and ``None``
    parse as in MMEngine. An expression (``dict(a=1, b=2)``,
    ``dict(type='ANLoss')``, ``[dict(type='X')]``, ``{'a': 1}``), which
    MMEngine's parser kept as a string (the run then failed on it far from
    the option) or, with a comma inside its brackets, recursed on until
    Python's limit, is refused with the ways to set it, as the parser's
    error (usage, message, exit status 2).
    """

    def __call__(self, parser, namespace, values, option_string=None):
        # a value refused is the parser's error (usage, the message, exit
        # status 2), not a traceback
        try:
            super().__call__(parser, namespace, values, option_string)
        except ValueError as err:
            raise argparse.ArgumentError(self, str(err)) from None

    @staticmethod
    def _parse_iterable(val: str) -> Any:
        val = val.strip().strip('\'"').strip()
        is_tuple = val.startswith('(') and val.endswith(')')
        is_bracketed = is_tuple or val.startswith('[') and val.endswith(']')
        if is_bracketed:
            val = val[1:-1]
        elif ',' not in val:
            if _EXPRESSION.match(val):
                raise _expression_error(val)
            return DictAction._parse_int_float_bool(val)
        if val.count('(') != val.count(')') or \
                val.count('[') != val.count(']'):
            raise ValueError(f'unbalanced brackets in --cfg-options value '
                             f'{val!r}')
        if not is_bracketed and _next_comma(val) == len(val):
            # a comma inside a call such as dict(a=1, b=2): MMEngine's
            # parser recursed on it until Python's limit
            raise _expression_error(val)
        values = []
        while val.strip():
            end = _next_comma(val)
            values.append(ConfigOptionsAction._parse_iterable(val[:end]))
            val = val[end + 1:]
        return tuple(values) if is_tuple else values


def add_cfg_options(parser: argparse.ArgumentParser, example: str) -> None:
    """Add ``--cfg-options`` (:class:`ConfigOptionsAction`) to a tool's
    parser; its help shows the override ``example``."""
    parser.add_argument(
        '--cfg-options',
        nargs='+',
        action=ConfigOptionsAction,
        help=f'override config entries, e.g. {example}')
