"""Full-batch training on the synthetic data: the compiled C kernel (kernel, _kernel.c)
and the torch reference loop (torch_loop), and which torch device a run uses (devices)."""
