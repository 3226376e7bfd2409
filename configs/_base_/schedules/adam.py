# Adam, constant learning rate, as the SPML papers; the linear head learns
# 10x faster than the backbone (GR release).
optim_wrapper = dict(
    optimizer=dict(type='Adam', lr=1e-5, weight_decay=0.),
    paramwise_cfg=dict(custom_keys={'head': dict(lr_mult=10.)}))

param_scheduler = []

train_cfg = dict(by_epoch=True, max_epochs=10, val_interval=1)
val_cfg = dict()
test_cfg = dict()
