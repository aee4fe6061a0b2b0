"""Real-data experiments: BERT on MNLI and CivilComments, ViT-small on MNIST and CIFAR-10,
and BERT token similarities (the paper's Figs. 1, 4, 6, 7 and 10).

Data and weights come from where users keep them (config keys `real_data.data_root` and
the model names); nothing here downloads unless the config allows it.
"""
