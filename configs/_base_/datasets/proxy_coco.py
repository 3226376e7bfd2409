# COCO-like proxy (tools/make_proxy_data.py --like coco --fraction 0.1): 80
# classes, 2.94 positives per image, 6,566 train / 1,642 val / 4,014 test
# images of 128 px (a tenth of COCO's split sizes; --fraction 1 and
# formatted files of the full size need no change here), in the interchange
# format under data/proxy-coco; read as the VOC-like proxy (proxy_voc.py),
# batch size 16 as the papers' COCO runs.
_base_ = ['./proxy_voc.py']

data_root = 'data/proxy-coco'
num_classes = 80

data_preprocessor = dict(num_classes=num_classes)

feature_cache = f'{data_root}/features/efficientnet-lite0_128px.npz'
cached_train_pipeline = [
    dict(_base_.cached_train_pipeline[0], cache_file=feature_cache),
    *_base_.cached_train_pipeline[1:]]
cached_test_pipeline = [
    dict(_base_.cached_test_pipeline[0], cache_file=feature_cache),
    *_base_.cached_test_pipeline[1:]]

train_dataloader = dict(batch_size=16, dataset=dict(data_root=data_root))
val_dataloader = dict(dataset=dict(data_root=data_root))
test_dataloader = val_dataloader
