"""The GPU tier on a GPU (``gpu_tier.md``, from the GPU command's
``gpu_tier.json``)."""


def tier_page(result: dict) -> str:
    """``gpu_tier.md``: the outcome of every test of the GPU tier."""
    env = result['environment']
    lines = [
        '# The GPU tier on a GPU', '',
        f"`{result['command']}` ({result['status']}, "
        f"{result['seconds']:.0f} s) on {env['device']}: torch "
        f"{env['torch']}, CUDA {env['cuda']}, cuDNN {env['cudnn']}, mmengine "
        f"{env['mmengine']}, mmpretrain {env['mmpretrain']}.", '',
        f"**{result['passed']} passed, {result['failed']} failed, "
        f"{result['errors']} errors, {result['skipped']} skipped.**", '',
        '| test | outcome | seconds | message |', '| --- | --- | --- | --- |'
    ]
    for name, test in result['tests'].items():
        message = test.get('message', '').replace('|', '\\|').replace(
            '\n', ' ')
        lines.append(f"| `{name}` | {test['outcome']} | "
                     f"{test['seconds']:.1f} | {message} |")
    return '\n'.join(lines + [''])
