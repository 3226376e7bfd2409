# SGD with momentum and a constant learning rate, for OPML (SPEC 6: the OPML
# paper trains with SGD). The paper's learning rate, momentum and weight decay
# are not recoverable; these are the usual values for fine-tuning an
# ImageNet-pretrained ResNet-50 at small batch sizes: backbone 1e-3, momentum
# 0.9, weight decay 1e-4, and the linear head 10x the backbone's rate like the
# Adam recipe of the other methods (GR release). Constant, as the SPML
# papers' schedules; the best validation epoch is kept.
optim_wrapper = dict(
    optimizer=dict(type='SGD', lr=1e-3, momentum=0.9, weight_decay=1e-4),
    paramwise_cfg=dict(custom_keys={'head': dict(lr_mult=10.)}))

param_scheduler = []

train_cfg = dict(by_epoch=True, max_epochs=10, val_interval=1)
val_cfg = dict()
test_cfg = dict()
