# Partial labels on the demo dataset: each training image observes one
# positive and two negatives (observe_uniform(num_pos=1, num_neg=2); the
# positives are those of an_vgg11bn_demo.py) and trains with partial-BCE, BCE on
# the known labels only with Durand et al.'s normalisation (docs/methods/partial_labels.md,
# Partial labels). ANLoss on the same data would train exactly as on single
# positives: AN already takes every unobserved label as a negative.
_base_ = ['./an_vgg11bn_demo.py']

model = dict(head=dict(loss=dict(type='PartialBCELoss', gamma=1.,
                                 scale_at_tenth=5.)))

train_dataloader = dict(
    dataset=dict(
        num_neg=2,
        pipeline=[
            dict(type='LoadImageFromFile'),
            # gt_label_neg carries the observed negatives to the head
            dict(type='PackInputs',
                 algorithm_keys=('gt_label_full', 'gt_label_neg')),
        ]))
