"""Full-batch training on the synthetic data, behind one dispatcher (dispatch: which backend
trains, and the runs trained on it): the compiled C kernel (kernel: the loop;
token_problem: its state; kernel_library: _kernel.c built and loaded) and the torch
reference loop (torch_loop); what both share (metrics: a leaf, torch-free); and which torch
device a run uses (devices)."""
