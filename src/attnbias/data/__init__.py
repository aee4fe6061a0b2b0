"""The datasets: the data models and their generators (models; bad_direction apart, as it
needs an SVM), MNIST's IDX files (idx), the missing-data error (missing), and the paper's
assumptions and Condition 1 measured on a dataset (hypotheses)."""
