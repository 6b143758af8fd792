"""The article's GAN, trained on the bundled 8x8 handwritten digits (the main job: ``make demo``).

One forward of the generator feeds both losses: the discriminator's loss is backpropagated with
``retain_graph=True`` so the generator's graph survives for the generator's loss (the article's
section 2.1). ``--detach`` shows the alternative: the discriminator sees ``fake.detach()`` and no
graph needs to be retained.

    python examples/gan.py                    # default run, ~2 minutes on 2 cores
    python examples/gan.py --detach           # the detach() alternative
    python examples/gan.py --backend torch    # the same code on PyTorch

Writes to ``--out`` (default runs/gan): samples_epoch_XXX.png, losses.png, summary.json. The samples
are judged by the digits classifier (examples/classify_digits.py): mean top-class probability and
how many of the 10 classes appear (a class counts when >= 1% of 1,000 samples are given it).
"""

from __future__ import annotations

import argparse
import copy
import os
import resource
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import Timer, add_backend_arg, digits_arrays, load_backend, out_dir, write_json  # noqa: E402


def build_models(torch, nz: int):
    """Generator (N, nz) -> (N, 64) in [-1, 1]; discriminator (N, 64) -> (N, 1) logits."""
    nn = torch.nn
    generator = nn.Sequential(
        nn.Linear(nz, 128), nn.LeakyReLU(0.2),
        nn.Linear(128, 256), nn.LeakyReLU(0.2),
        nn.Linear(256, 64), nn.Tanh(),
    )
    discriminator = nn.Sequential(
        nn.Linear(64, 256), nn.LeakyReLU(0.2),
        nn.Linear(256, 128), nn.LeakyReLU(0.2),
        nn.Linear(128, 1),
    )
    return generator, discriminator


def save_grid(images, path: str, title: str) -> None:
    """Save (N, 64) images in [-1, 1] as a grid PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = min(len(images), 64)
    cols = 8
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(cols, rows))
    for k, ax in enumerate(axes.flat):
        ax.axis("off")
        if k < n:
            ax.imshow(images[k].reshape(8, 8), cmap="gray_r", vmin=-1, vmax=1)
    fig.suptitle(title)
    fig.savefig(path, dpi=80)
    plt.close(fig)


def save_losses(d_losses, g_losses, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.plot(d_losses, label="discriminator", lw=0.6)
    ax.plot(g_losses, label="generator", lw=0.6)
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def judge(torch, generator, classifier, nz: int, n: int = 1000) -> dict:
    """Classify ``n`` generated digits: mean top-class probability and classes covered."""
    with torch.no_grad():
        samples = generator(torch.randn(n, nz)).reshape(n, 1, 8, 8)
        probs = torch.softmax(classifier((samples + 1) / 2), dim=1)
    top = probs.max(dim=1).values
    counts = [int((probs.argmax(dim=1) == k).sum().item()) for k in range(10)]
    return {
        "mean_top_class_probability": round(float(top.mean().item()), 4),
        "classes_covered": sum(c >= n // 100 for c in counts),
        "class_counts": counts,
    }


def train(torch, args) -> dict:
    torch.manual_seed(args.seed)
    images, _ = digits_arrays("train", "tanh")
    real_all = torch.from_numpy(images.reshape(len(images), 64))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(real_all),
                                         batch_size=args.batch_size, shuffle=True, drop_last=True)
    generator, discriminator = build_models(torch, args.nz)
    averaged = copy.deepcopy(generator)  # an exponential moving average of G: steadier samples
    opt_g = torch.optim.Adam(generator.parameters(), lr=args.lr, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(discriminator.parameters(), lr=args.lr, betas=(0.5, 0.999))
    bce = torch.nn.BCEWithLogitsLoss()
    fixed_z = torch.randn(64, args.nz)
    d_losses, g_losses = [], []
    out = out_dir(args.out)
    timer = Timer()
    steps = 0
    epochs = range(args.epochs)
    if not args.quiet:
        from tqdm import tqdm

        epochs = tqdm(epochs, desc="GAN", unit="epoch")
    for epoch in epochs:
        for (real,) in loader:
            b = real.shape[0]
            fake = generator(torch.randn(b, args.nz))  # one generator forward, two losses
            d_in_fake = fake.detach() if args.detach else fake
            d_loss = (bce(discriminator(real), torch.full((b, 1), 0.9))
                      + bce(discriminator(d_in_fake), torch.zeros(b, 1)))
            opt_d.zero_grad()
            d_loss.backward(retain_graph=not args.detach)  # keep G's graph for g_loss
            opt_d.step()
            g_loss = bce(discriminator(fake), torch.ones(b, 1))
            opt_g.zero_grad()  # drop what d_loss sent into G
            g_loss.backward()
            opt_g.step()
            with torch.no_grad():
                for p_avg, p in zip(averaged.parameters(), generator.parameters()):
                    p_avg.mul_(args.ema).add_(p, alpha=1 - args.ema)
            d_losses.append(d_loss.item())
            g_losses.append(g_loss.item())
            steps += 1
        if not args.quiet:
            epochs.set_postfix(d_loss=f"{d_losses[-1]:.3f}", g_loss=f"{g_losses[-1]:.3f}")
        if (epoch + 1) % args.sample_every == 0 or epoch + 1 == args.epochs:
            with torch.no_grad():
                grid = averaged(fixed_z).numpy()
            save_grid(grid, os.path.join(out, f"samples_epoch_{epoch + 1:03d}.png"),
                      f"epoch {epoch + 1}")
    seconds = timer.elapsed()
    save_losses(d_losses, g_losses, os.path.join(out, "losses.png"))
    summary = {
        "backend": torch.__name__,
        "epochs": args.epochs,
        "steps": steps,
        "seconds": round(seconds, 2),
        "ms_per_step": round(1000 * seconds / max(steps, 1), 3),
        "final_d_loss": round(d_losses[-1], 4),
        "final_g_loss": round(g_losses[-1], 4),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "variant": "detach" if args.detach else "retain_graph",
    }
    memory = getattr(torch, "memory", None)
    if memory is not None and hasattr(memory, "max_memory_allocated"):
        summary["peak_tensor_memory_mb"] = round(memory.max_memory_allocated() / 2**20, 3)
    if not args.no_judge:
        from classify_digits import load_or_train

        classifier = load_or_train(torch, args.classifier, progress=not args.quiet)
        summary.update(judge(torch, averaged, classifier, args.nz))
    write_json(os.path.join(out, "summary.json"), summary)
    return summary


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Train the article's GAN on the bundled digits.",
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    add_backend_arg(parser)
    parser.add_argument("--epochs", type=int, default=160)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=2e-4)
    parser.add_argument("--nz", type=int, default=32, help="latent size")
    parser.add_argument("--ema", type=float, default=0.995, help="decay of the averaged generator")
    parser.add_argument("--detach", action="store_true",
                        help="feed fake.detach() to the discriminator instead of retain_graph")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sample-every", type=int, default=20, help="epochs between sample grids")
    parser.add_argument("--out", default="runs/gan")
    parser.add_argument("--classifier", default="runs/classifier/classifier.safetensors")
    parser.add_argument("--no-judge", action="store_true", help="skip the classifier's verdict")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    return parser.parse_args(argv)


def main(argv=None) -> dict:
    args = parse_args(argv)
    torch = load_backend(args.backend)
    summary = train(torch, args)
    print(f"{summary['steps']} steps in {summary['seconds']} s ({summary['ms_per_step']} ms/step)")
    if "mean_top_class_probability" in summary:
        print(f"mean top-class probability {summary['mean_top_class_probability']:.3f}, "
              f"classes covered {summary['classes_covered']}/10 -> {args.out}/summary.json")
    return summary


if __name__ == "__main__":
    main()
