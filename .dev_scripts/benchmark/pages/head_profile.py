"""The operators of every head's training step
(``benchmark.head_profile``): a page of its own, and the section
under the heads table of the GPU speed page."""

#: what the render counts as the cost of a head, beyond the stock head's
PHASES = ('optimizer', 'loss', 'other')


def why(method: str, result: dict, stock: dict) -> str:
    """A sentence on what a head's step does beyond the stock one."""
    parts = []
    if result['views'] > 1:
        parts.append(f"{result['views']} views of each image: the network "
                     f"runs on {result['views']}x the images of a step "
                     '(images/s counts samples)')
    default = result.get('default_constructor')
    if default:
        extra = default['ops']['optimizer'] - result['ops']['optimizer']
        parts.append(
            f"under MMEngine's default constructor, {default['param_groups']}"
            f" parameter groups (one per parameter, from the config's "
            f"paramwise_cfg) cost {extra:+.0f} operators in the optimizer "
            f"({default['ops']['total'] / stock['ops']['total']:.2f}x the "
            f"stock step's); {result['param_groups']} groups now")
    extra = {p: result['ops'][p] - stock['ops'][p] for p in PHASES}
    worst = max(extra, key=extra.get)
    share = result['ops']['total'] / stock['ops']['total']
    parts.append(f'{share:.2f}x the stock step\'s operators'
                 + (f' ({extra[worst]:+.0f} in {worst})'
                    if extra[worst] >= 1 else ''))
    return '; '.join(parts)


def render(profile_record: dict, missed=(), level: int = 3) -> str:
    """The profile as a Markdown section with a heading of ``level`` (1: a
    page of its own); ``missed``: the methods below their target
    (``speed_gpu``'s heads table), which get their sentence of why."""
    heads = profile_record['heads']
    stock = heads['stock']
    settings = profile_record['settings']
    lines = [
        '#' * level + ' Why: operators per step', '',
        f"Measured with `{profile_record['command']}` on "
        f"{profile_record['environment']}, spml-mm commit "
        f"{profile_record['commit'] or 'unknown'}; batch "
        f"{settings['batch_size']}, {settings['img_size']} px, fp32, the "
        "optimizer's foreach update (PyTorch's default on CUDA). ATen "
        'operators that a `train_step` calls itself (on a GPU, about a '
        'kernel launch each) per step: all of them, the optimizer\'s '
        '(`zero_grad` and `step`) and the head\'s loss forward; share: '
        'against the stock head\'s step.', ''
    ]
    default = any('default_constructor' in r for r in heads.values())
    header = ['head', 'param groups', 'views', 'operators', 'share',
              'optimizer', 'loss']
    if default:
        header += ["operators, MMEngine's constructor",
                   "param groups, MMEngine's constructor"]
    lines += ['| ' + ' | '.join(header) + ' |',
              '| --- ' * len(header) + '|']
    for method, result in heads.items():
        ops = result['ops']
        cells = [method, str(result['param_groups']), str(result['views']),
                 f"{ops['total']:.0f}",
                 f"{ops['total'] / stock['ops']['total']:.2f}",
                 f"{ops['optimizer']:.0f}", f"{ops['loss']:.0f}"]
        if default:
            other = result.get('default_constructor')
            cells += [f"{other['ops']['total']:.0f}",
                      str(other['param_groups'])] if other else ['-', '-']
        lines.append('| ' + ' | '.join(cells) + ' |')
    lines.append('')
    for method in dict.fromkeys(missed):
        if method in heads and method != 'stock':
            lines.append(f'- {method}: {why(method, heads[method], stock)}.')
    if missed:
        lines.append('')
    return '\n'.join(lines)


def page(profile_record: dict) -> str:
    """``head_profile.md``: the profile as a page of its own, with the
    sentence of why for every head profiled."""
    return render(profile_record, missed=list(profile_record['heads']),
                  level=1)
