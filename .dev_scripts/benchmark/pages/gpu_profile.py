"""Where the time of a training run goes (``benchmark.profile_train``):
its page, and the GPU command's page of the runs it profiled
(``gpu_profile.md``)."""


def render(results) -> str:
    """A page of one or several ``profile_train`` results."""
    lines = [
        '# Where the time of a training run goes', '',
        'Each iteration split into the wait for its batch and the step as '
        'the host sees it (without synchronisation), after the first '
        'iterations; the whole run\'s seconds (building, a compiled run\'s '
        'compilation, every iteration); then the operators of a profiled '
        'window.', '',
        '| run | device | batch | iterations | data wait median / mean (ms) '
        '| step median / mean (ms) | iterations/s | share waiting for data '
        '| whole run (s) |',
        '| --- | --- | --- | --- | --- | --- | --- | --- | --- |'
    ]
    for r in results:
        lines.append(
            f"| {r['label'] or '-'} | {r['device']} | {r['batch_size']} | "
            f"{r['iterations']} | {r['data_s']['median'] * 1e3:.2f} / "
            f"{r['data_s']['mean'] * 1e3:.2f} | "
            f"{r['step_s']['median'] * 1e3:.2f} / "
            f"{r['step_s']['mean'] * 1e3:.2f} | "
            f"{r['iterations_per_s']:.1f} | {100 * r['data_share']:.0f}% | "
            f"{r['wall_s']:.1f} |")
    lines.append('')
    for r in results:
        lines += [f"Command: `{r['command']}` (torch {r['torch']}, CUDA "
                  f"{r['cuda']})", '']
        for key, table in r['operators'].items():
            lines += [f"Operators of `{r['label'] or 'the run'}` by "
                      f'`{key}`:', '', '```text', table.rstrip(), '```', '']
    return '\n'.join(lines)


def profile_page(result: dict) -> str:
    """``gpu_profile.md``: the profiled runs of a GPU command, with its
    device."""
    env = result['environment']
    head = (f"Fine-tuned VOC-like proxy runs on {env['device']} "
            f"({env['cpu_cores']} CPU cores; torch {env['torch']}, CUDA "
            f"{env['cuda']}), each alone on the machine: "
            + ', '.join(f"`{r['label']}`" for r in result['runs'])
            + ' (`LoadCachedImage` reads the image cache' + (
                "; compiled: MMEngine's `compile` of the train step"
                if any('compiled' in r['label'] for r in result['runs'])
                else '') + ').')
    text = render(result['runs'])
    title, rest = text.split('\n', 1)
    return '\n'.join([title, '', head, rest])
