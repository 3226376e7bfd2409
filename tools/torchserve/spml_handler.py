"""A TorchServe handler answering label sets (MMPretrain's
``tools/torchserve/mmpretrain_handler.py`` answers one argmax class).

Each image of a request batch is answered with ``labels`` (its label set,
best first) and their ``scores``, by the decision recorded in the
checkpoint by ``tools/calibrate.py`` (else the head's ``thr``), which the
model's log names when it loads (``decision: ...``). The logic is
:class:`spml_mm.apis.LabelSetService`. Archive and serve it as
docs/user_guides/label_sets.md ("Serving") shows:

    torch-model-archiver --model-name spml --version 1.0 \\
        --serialized-file CHECKPOINT --handler tools/torchserve/spml_handler.py \\
        --extra-files model_store/config.py --export-path model_store
"""
import logging
import os.path as osp

import torch
from ts.torch_handler.base_handler import BaseHandler

from spml_mm.apis import LabelSetService

logger = logging.getLogger(__name__)


class SPMLHandler(BaseHandler):
    """Label sets of images by a checkpoint's decision."""

    def initialize(self, context):
        properties = context.system_properties
        model_dir = properties.get('model_dir')
        gpu = properties.get('gpu_id')
        device = f'cuda:{gpu}' if torch.cuda.is_available() and \
            gpu is not None else 'cpu'
        checkpoint = osp.join(model_dir,
                              context.manifest['model']['serializedFile'])
        self.service = LabelSetService(osp.join(model_dir, 'config.py'),
                                       checkpoint, device)
        for line in self.service.inferencer.warnings:
            logger.warning(line)
        logger.info('decision: %s', self.service.decision)
        self.initialized = True

    def preprocess(self, data):
        return self.service.preprocess(data)

    def inference(self, data, *args, **kwargs):
        return self.service.inference(data)

    def postprocess(self, data):
        return self.service.postprocess(data)
