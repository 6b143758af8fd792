"""Gradient accumulation on the bundled digits: the article's section 3 loop, proven equal to the
full batch, with the memory it saves, its BatchNorm caveat, and mixed precision (section 3.2).

    python examples/grad_accumulation.py                   # batch 64 as 4 micro-batches of 16
    python examples/grad_accumulation.py --amp bf16        # + autocast(bfloat16), vs float32
    python examples/grad_accumulation.py --amp fp16        # + autocast(float16) and GradScaler
    python examples/grad_accumulation.py --backend torch   # the same code on PyTorch

1. The gradient of ``loss / accumulation_steps`` summed over the micro-batches equals the gradient of
   the full batch (printed: the largest difference), while the tensors autograd saves for backward
   and the peak of all live tensors during the step (``glassgrad.memory``) shrink with the
   micro-batch (memory.png).
2. BatchNorm in train mode normalises each micro-batch by its own statistics, so there the two
   differ: the script warns, with the numbers.
3. It trains the digits classifier with the accumulation loop; with ``--amp`` it trains it again
   under autocast and compares the test accuracy with float32's (float16 goes through GradScaler,
   whose step-by-step history is printed: the skipped steps, the parameters whose gradients
   overflowed, the scale; bfloat16 has float32's range and needs no scaler).

Writes ``--out`` (default runs/grad_accumulation, runs/grad_accumulation-torch with
``--backend torch``): summary.json and memory.png.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import (
    HelpFormatter,
    Timer,
    add_backend_arg,
    add_out_arg,
    blas_threads,
    digits_arrays,
    load_backend,
    out_dir,
    resolve_out,
    write_json,
)
from classify_digits import build_classifier

AMP_DTYPES = {"bf16": "bfloat16", "fp16": "float16"}


def build_bn_classifier(torch):
    """The classifier with BatchNorm after each convolution: (N, 1, 8, 8) -> (N, 10) logits."""
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
        nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32 * 4 * 4, 10),
    )


def saved_bytes(torch, forward, params):
    """(loss, bytes autograd saved for backward behind it): each buffer once, parameters left
    out (they are alive anyway). glassgrad reads its graph ledger; torch counts storages through
    saved-tensor hooks."""
    if torch.__name__ == "glassgrad":
        loss = forward()
        return loss, torch.autograd.graph.to_dict(loss)["totals"]["saved_graph_only_bytes"]
    param_ptrs = {p.untyped_storage().data_ptr() for p in params}
    storages = {}

    def pack(t):
        s = t.untyped_storage()
        if s.data_ptr() not in param_ptrs:
            storages[s.data_ptr()] = s.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = forward()
    return loss, sum(storages.values())


def accumulated_grads(torch, model, x, y, micro: int, measure_peak: bool = False):
    """The article's loop over one batch: ``(loss / steps).backward()`` per micro-batch. Returns
    (gradients as float64 arrays, the most bytes one micro-batch's forward saved, the peak of all
    live tensor memory during the loop when ``measure_peak`` (glassgrad.memory; None on torch's
    CPU, which has no such counter))."""
    loss_fn = torch.nn.CrossEntropyLoss()
    steps = len(x) // micro
    model.zero_grad()
    memory = getattr(torch, "memory", None) if measure_peak else None
    if memory is not None:
        memory.reset_peak_memory_stats()
    peak = 0
    for k in range(steps):
        # NOTE: clone() as a DataLoader's fresh batch: a slice would keep (and count) all of x
        xs, ys = x[k * micro:(k + 1) * micro].clone(), y[k * micro:(k + 1) * micro]
        loss, nbytes = saved_bytes(torch, lambda xs=xs, ys=ys: loss_fn(model(xs), ys) / steps,
                                   list(model.parameters()))
        peak = max(peak, nbytes)
        loss.backward()
    grads = [p.grad.detach().numpy().astype(np.float64).copy() for p in model.parameters()]
    model.zero_grad()
    return grads, peak, None if memory is None else memory.max_memory_allocated()


def max_diff(grads_a, grads_b) -> tuple:
    """(largest |a - b| over all gradients, that relative to the largest |b|)."""
    diff = max(float(np.abs(a - b).max()) for a, b in zip(grads_a, grads_b))
    scale = max(float(np.abs(b).max()) for b in grads_b)
    return diff, diff / scale


def check_equivalence(torch, batch: int, sizes, seed: int) -> list:
    """For each micro-batch size: steps, saved bytes, max |accumulated - full-batch gradient|."""
    torch.manual_seed(seed)
    model = build_classifier(torch).eval()  # NOTE: eval() turns Dropout off: a fixed function
    x_np, y_np = digits_arrays("train", "unit")
    # NOTE: copies, so the tensors own their memory (a slice would hold the whole dataset)
    x, y = torch.from_numpy(x_np[:batch].copy()), torch.from_numpy(y_np[:batch].copy())
    full = accumulated_grads(torch, model, x, y, batch, measure_peak=True)
    rows = []
    print(f"\naccumulated vs full-batch gradient (batch {batch}, model.eval(), float32)")
    print(f"{'micro-batch':>11} {'steps':>5} {'saved for backward':>19} {'peak memory':>12} "
          f"{'max |diff|':>11}")
    for micro in sizes:
        grads, nbytes, peak = full if micro == batch else accumulated_grads(
            torch, model, x, y, micro, measure_peak=True)
        diff, _ = max_diff(grads, full[0])
        rows.append({"micro_batch": micro, "steps": batch // micro, "saved_bytes": int(nbytes),
                     "peak_bytes": peak, "max_abs_diff": diff})
        shown = "-" if peak is None else f"{peak / 1024:.1f} KiB"
        print(f"{micro:>11} {batch // micro:>5} {nbytes / 1024:>15.1f} KiB {shown:>12} "
              f"{diff:>11.2e}")
    memory = getattr(torch, "memory", None)
    if memory is not None:
        memory.set_tracking(False)  # NOTE: counting costs ~0.5 us per tensor: off for training
    print("(peak memory: every live tensor during the step, parameters and gradients included)")
    return rows


def check_batchnorm(torch, batch: int, micro: int, seed: int) -> dict:
    """Accumulated vs full-batch gradients of a BatchNorm model in train and in eval mode; warns
    when train mode makes them differ."""
    torch.manual_seed(seed)
    model = build_bn_classifier(torch)
    x_np, y_np = digits_arrays("train", "unit")
    x, y = torch.from_numpy(x_np[:batch]), torch.from_numpy(y_np[:batch])
    result = {}
    for mode in ("train", "eval"):
        model.train(mode == "train")
        state = {k: v.clone() for k, v in model.state_dict().items()}
        full = accumulated_grads(torch, model, x, y, batch)[0]
        model.load_state_dict(state)  # NOTE: train mode updated the running statistics
        grads = accumulated_grads(torch, model, x, y, micro)[0]
        model.load_state_dict(state)
        result[mode] = max_diff(grads, full)
    diff, rel = result["train"]
    print(f"\nBatchNorm model, batch {batch} as {batch // micro} x {micro}: max |diff| "
          f"{diff:.2e} in train mode ({rel:.1%} of the largest gradient), "
          f"{result['eval'][0]:.2e} in eval mode")
    if rel > 1e-4:
        warnings.warn(
            f"gradient accumulation differs from the full batch with BatchNorm in train mode: "
            f"max |diff| {diff:.3g} ({rel:.1%} of the largest gradient) for batch {batch} as "
            f"{batch // micro} micro-batches of {micro}. Each micro-batch is normalised with its "
            f"own mean and variance ({micro} samples, not {batch}) and the running statistics are "
            f"updated {batch // micro} times per step. Use larger micro-batches, GroupNorm/"
            "LayerNorm, or accept the noise (in eval mode the gradients agree: "
            f"{result['eval'][0]:.1e}).",
            UserWarning,
            stacklevel=2,
        )
    return {"train_max_abs_diff": diff, "train_relative_diff": rel,
            "eval_max_abs_diff": result["eval"][0]}


def evaluate(torch, model) -> float:
    x, y = digits_arrays("test", "unit")
    model.eval()
    with torch.no_grad():
        pred = model(torch.from_numpy(x)).argmax(1)
    return float((pred == torch.from_numpy(y)).float().mean().item())


def train(torch, args, amp: str | None = None, progress: bool = True):
    """The article's accumulation loop (section 3.1; with ``amp``, section 3.2's autocast and
    GradScaler). Returns (test accuracy, the scaler, the losses)."""
    torch.manual_seed(args.seed)
    x, y = digits_arrays("train", "unit")
    x, y = x[:args.train_samples], y[:args.train_samples]
    data = torch.utils.data.TensorDataset(torch.from_numpy(x), torch.from_numpy(y))
    data_loader = torch.utils.data.DataLoader(data, batch_size=args.micro_batch, shuffle=True)
    model = build_classifier(torch)
    optimizer = torch.optim.Adam(model.named_parameters(), lr=args.lr)
    criterion = torch.nn.CrossEntropyLoss()
    accumulation_steps = args.batch_size // args.micro_batch
    total_steps = args.epochs * len(data_loader) // accumulation_steps
    # a cosine decay to 0 lets runs that differ in rounding settle on comparable accuracies
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, max(total_steps, 1))
    dtype = getattr(torch, AMP_DTYPES[amp]) if amp else None
    # float16's range ends at 65504: its gradients need loss scaling; bfloat16's does not
    scaler = torch.amp.GradScaler("cpu", growth_interval=args.growth_interval,
                                  enabled=amp == "fp16")
    epochs = range(args.epochs)
    if progress:
        from tqdm import tqdm

        epochs = tqdm(epochs, desc=f"train {amp or 'float32'}", unit="epoch")
    losses = []
    i = 0  # NOTE: counts micro-batches across epochs, so a partial group carries over
    model.zero_grad()
    for _ in epochs:
        model.train()
        for inputs, targets in data_loader:
            with torch.autocast("cpu", dtype=dtype, enabled=amp is not None):
                outputs = model(inputs)
                loss = criterion(outputs, targets) / accumulation_steps
            with np.errstate(over="ignore", invalid="ignore"):  # fp16 overflow: the scaler's job
                scaler.scale(loss).backward()
            if (i + 1) % accumulation_steps == 0:
                scaler.step(optimizer)
                scaler.update()
                model.zero_grad()
                scheduler.step()
            losses.append(loss.item() * accumulation_steps)
            i += 1
        if progress:
            epochs.set_postfix(loss=f"{np.mean(losses[-len(data_loader):]):.3f}")
    return evaluate(torch, model), scaler, losses


def print_history(torch, scaler) -> dict:
    """The scaler's record: every skipped step, the scale trace, totals."""
    if not scaler.is_enabled():
        print("bfloat16 keeps float32's exponent range: no loss scaling (scaler disabled)")
        return {"enabled": False}
    history = list(getattr(scaler, "history", []))
    if not history:  # torch's GradScaler keeps no record
        print(f"final scale {scaler.get_scale():g} (torch's GradScaler keeps no history)")
        return {"enabled": True, "final_scale": scaler.get_scale()}
    skipped = [r for r in history if r.skipped]
    print(f"GradScaler: {len(history)} steps, {len(skipped)} skipped, final scale "
          f"{scaler.get_scale():g}")
    for record in history[:3]:
        print("  ", record)
    if len(history) > 3:
        print("   ...")
    for record in skipped:
        if record not in history[:3]:
            print("  ", record)
    changes = [(r.iteration, r.new_scale) for k, r in enumerate(history)
               if k == 0 or r.new_scale != history[k - 1].new_scale]
    print("   scale after update():", ", ".join(f"{s:g} (from iteration {it})"
                                                 for it, s in changes[:8]))
    return {"enabled": True, "steps": len(history), "skipped": len(skipped),
            "skipped_iterations": [r.iteration for r in skipped],
            "final_scale": scaler.get_scale(),
            "nonfinite_parameters": sorted({n for r in skipped for n in r.nonfinite})}


def plot_memory(rows, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    pos = np.arange(len(rows))
    ax.bar(pos - 0.2, [r["saved_bytes"] / 1024 for r in rows], 0.4, label="saved for backward")
    if rows[0]["peak_bytes"] is not None:
        ax.bar(pos + 0.2, [r["peak_bytes"] / 1024 for r in rows], 0.4,
               label="peak of all tensors")
    ax.set_xticks(pos, [f"{r['micro_batch']} x {r['steps']}" for r in rows])
    ax.set_xlabel("micro-batch x accumulation steps (same effective batch)")
    ax.set_ylabel("KiB")
    ax.set_title("memory of one optimizer step")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description="Gradient accumulation (and mixed precision) on the bundled digits.",
        formatter_class=HelpFormatter)
    add_backend_arg(parser)
    parser.add_argument("--epochs", type=int, default=10,
                        help="passes over the training images when training the classifier")
    parser.add_argument("--batch-size", type=int, default=64, help="effective batch per step")
    parser.add_argument("--micro-batch", type=int, default=16, help="samples per forward")
    parser.add_argument("--lr", type=float, default=2e-3,
                        help="Adam learning rate (cosine decay to 0)")
    parser.add_argument("--amp", choices=["bf16", "fp16"], default=None,
                        help="also train under autocast in this dtype and compare with float32")
    parser.add_argument("--check-sizes", default="64,32,16,8,4",
                        help="micro-batch sizes of the equivalence and memory table")
    parser.add_argument("--growth-interval", type=int, default=20,
                        help="GradScaler's growth_interval (PyTorch's 2000 is never reached in a "
                        "short run; 20 shows the scaler probing the largest safe scale)")
    parser.add_argument("--train-samples", type=int, default=None,
                        help="use only the first N training images (smoke tests)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the weights and the shuffling")
    add_out_arg(parser, "runs/grad_accumulation")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    if args.batch_size % args.micro_batch:
        parser.error("--batch-size must be a multiple of --micro-batch")
    resolve_out(args, "runs/grad_accumulation")
    return args


def main(argv=None) -> dict:
    """Run the checks and the training; returns the summary (also written to summary.json)."""
    args = parse_args(argv)
    with blas_threads():  # one BLAS thread: small matrices (see _common.blas_threads)
        return _main(args)


def _main(args) -> dict:
    torch = load_backend(args.backend)
    timer = Timer()
    out = out_dir(args.out)
    sizes = [int(s) for s in args.check_sizes.split(",") if args.batch_size % int(s) == 0]
    rows = check_equivalence(torch, args.batch_size, sizes, args.seed)
    plot_memory(rows, os.path.join(out, "memory.png"))
    bn = check_batchnorm(torch, args.batch_size, args.micro_batch, args.seed)
    steps = args.batch_size // args.micro_batch
    print(f"\ntraining: batch {args.batch_size} = {steps} x {args.micro_batch}, "
          f"{args.epochs} epoch{'s' * (args.epochs != 1)}, lr {args.lr} (cosine decay), Adam")
    accuracy, _, losses = train(torch, args, progress=not args.quiet)
    print(f"float32 test accuracy {accuracy:.2%}")
    summary = {"backend": torch.__name__, "batch_size": args.batch_size,
               "micro_batch": args.micro_batch, "accumulation_steps": steps,
               "epochs": args.epochs, "equivalence": rows, "batchnorm": bn,
               "float32_accuracy": accuracy, "final_loss": float(np.mean(losses[-20:]))}
    if args.amp:
        amp_accuracy, scaler, _ = train(torch, args, amp=args.amp, progress=not args.quiet)
        delta = 100 * (amp_accuracy - accuracy)
        print(f"{AMP_DTYPES[args.amp]} autocast test accuracy {amp_accuracy:.2%} "
              f"({delta:+.2f} points vs float32)")
        summary.update(amp=args.amp, amp_accuracy=amp_accuracy, amp_delta_points=delta,
                       amp_within_1_point=abs(delta) <= 1.0, scaler=print_history(torch, scaler))
    summary["seconds"] = round(timer.elapsed(), 2)
    write_json(os.path.join(out, "summary.json"), summary)
    print(f"done in {summary['seconds']} s -> {out}/summary.json, memory.png")
    return summary


if __name__ == "__main__":
    main()
