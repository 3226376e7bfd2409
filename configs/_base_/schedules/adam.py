# Adam with one constant learning rate for the whole network and no weight
# decay, as the community code (Cole et al. 2021, train.py) and the EM + APL
# release (main.py, initialize_training_run). The GR configs give the linear
# head 10x the backbone's rate, as the GR release does.
# GroupedOptimWrapperConstructor: MMEngine's constructor with one parameter
# group per set of options (a paramwise_cfg, such as the GR configs', would
# otherwise make a group of every parameter, each updated by its own kernels)
optim_wrapper = dict(
    constructor='GroupedOptimWrapperConstructor',
    optimizer=dict(type='Adam', lr=1e-5, weight_decay=0.))

param_scheduler = []

train_cfg = dict(by_epoch=True, max_epochs=10, val_interval=1)
val_cfg = dict()
test_cfg = dict()
