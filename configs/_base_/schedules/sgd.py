# SGD with momentum and one constant learning rate, for OPML (the OPML paper
# trains with SGD; it has no released code, so the procedure follows the
# community code's conventions: one learning rate for the whole network, no
# early stopping, the best validation epoch kept). The paper's learning rate,
# momentum and weight decay are not recoverable; these are the usual values
# for fine-tuning an ImageNet-pretrained ResNet-50 at small batch sizes:
# lr 1e-3, momentum 0.9, weight decay 1e-4.
# GroupedOptimWrapperConstructor: as in adam.py
optim_wrapper = dict(
    constructor='GroupedOptimWrapperConstructor',
    optimizer=dict(type='SGD', lr=1e-3, momentum=0.9, weight_decay=1e-4))

param_scheduler = []

train_cfg = dict(by_epoch=True, max_epochs=10, val_interval=1)
val_cfg = dict()
test_cfg = dict()
