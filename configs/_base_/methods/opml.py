# OPML (docs/methods/opml.md): SGD (the OPML paper, Sec. IV), one learning
# rate, 10 epochs; configs/_base_/schedules/sgd.py says how its values were
# chosen. The loss is the config's.
_base_ = ['../schedules/sgd.py', '../default_runtime.py']
