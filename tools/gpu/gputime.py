"""CUDA-event timing shared by the PyTorch references (dit_ref.py, qwen_ref.py)."""
import torch


def timed(fn, reps, warm=0):
    """The median of reps timed calls of fn in seconds, after warm untimed ones."""
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b) / 1000)
    ts.sort()
    return ts[len(ts) // 2]
