"""spml_mm.datasets.validation: duplicates, images shared between splits and
classes without a training positive, against hand-made data infos."""
from spml_mm.datasets.validation import (classes_without_positive,
                                         duplicate_findings,
                                         shared_image_findings)


def test_val_and_test_sharing_is_a_warning_training_sharing_a_problem():
    train = [dict(img_path='a/x.jpg', gt_label=[0], gt_label_full=[0])]
    val = [dict(img_path='a/y.jpg', gt_label=[1]),
           dict(img_path='a//x.jpg', gt_label=[0])]
    test = [dict(img_path='a/y.jpg', gt_label=[1])]
    problems, warnings = shared_image_findings(
        dict(train=train, val=val, test=test))
    assert problems == [
        'image a/x.jpg is in both the train split (sample 0) and the val '
        'split (sample 1), labels [0] in both; the val scores would count an '
        'image the model trained on: list it in one split only'
    ]
    assert warnings == [
        'image a/y.jpg is in both the val split (sample 0) and the test '
        'split (sample 0), labels [1] in both'
    ]
    assert shared_image_findings(dict(train=train, test=test)) == ([], [])


def test_training_copies_compare_full_labels_not_the_drawn_positive():
    infos = [dict(img_path='x.jpg', gt_label=[0], gt_label_full=[0, 2]),
             dict(img_path='x.jpg', gt_label=[2], gt_label_full=[0, 2]),
             dict(img_path='y.jpg', gt_label=[1], gt_label_full=[1]),
             dict(img_path='y.jpg', gt_label=[1], gt_label_full=[1, 2]),
             dict(img_path='y.jpg', gt_label=[1], gt_label_full=[1])]
    problems, warnings = duplicate_findings('train', infos)
    assert warnings == [
        'train: image x.jpg is listed 2 times with the same labels (samples '
        '0, 1); it counts 2 times in the loss and the scores: keep one row'
    ]
    assert problems == [
        'train: image y.jpg is listed 3 times with different labels (sample '
        '2: labels [1]; sample 3: labels [1, 2]; sample 4: labels [1]); keep '
        'one row, with its right labels'
    ]


def test_classes_without_positive_count_the_observed_positives():
    infos = [dict(gt_label=[0], gt_label_full=[0, 1]), dict(gt_label=[5])]
    assert classes_without_positive('train', infos, ['a', 'b', '2']) == (
        'train: 2 of 3 classes have no positive label in the training '
        'split: 1 (b), 2; the model never sees a positive of them and their '
        'AP measures nothing learned: add training images of them or leave '
        'them out of the classes')
    assert classes_without_positive('train', infos[:1], ['a']) is None
