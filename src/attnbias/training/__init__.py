"""Full-batch training on the synthetic data, behind one dispatcher (dispatch: which backend
trains, and the runs trained on it): the compiled C kernel (kernel, _kernel.c) and the torch
reference loop (torch_loop); what both share (metrics: a leaf, torch-free); and which torch
device a run uses (devices)."""
