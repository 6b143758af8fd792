"""The article glassgrad was made from, section by section, with ``import glassgrad as torch``.

The article (shared/seed/, in Chinese) explains PyTorch's dynamic graph through one debugging
story: the second-backward error, ``retain_graph``, gradient accumulation, mixed precision,
``create_graph`` for the WGAN-GP gradient penalty and x**3's derivatives, a MAML inner loop, and a
closing checklist. This script runs each section's code, using the article's own lines, and prints
what it shows, plus what glassgrad can show on top (the saved-tensor ledger, live memory, the graph
drawn before and after backward).

    python examples/seed_walkthrough.py                   # every section, < 30 s
    python examples/seed_walkthrough.py --section 2.2     # one section (2 runs 2.1 and 2.2)
    python examples/seed_walkthrough.py --backend torch   # the same code on PyTorch

On PyTorch the glass-box parts (ledger, CPU memory counters, make_dot without torchviz, the HTML
view) are skipped with a note; everything else prints the same numbers (weights come from NumPy, so
both libraries start equal). Writes to ``--out`` (default runs/seed_walkthrough, runs/seed_walkthrough-torch with
``--backend torch``): memory.png,
graph.dot (+ graph.svg/png with the Graphviz binary), graph_after_backward.dot, step.html,
summary.json.
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import textwrap
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import (
    HelpFormatter,
    Timer,
    add_backend_arg,
    add_out_arg,
    blas_threads,
    load_backend,
    out_dir,
    resolve_out,
    write_json,
)
from _seed_sections import (
    count_nodes,
    echo,
    loader,
    mlp,
    numpy_init,
    randn,
    say,
    section_2_2_memory,
    section_3_2_amp,
    section_5_maml,
    section_checklist,
)

KEY_PHRASE = "Trying to backward through the graph a second time"


def section_1_1_lifecycle(torch, ctx) -> None:
    echo("x = torch.tensor(2., requires_grad=True)  # leaf",
         "y = x ** 2                               # intermediate node",
         "y.backward()                             # backpropagation")
    x = torch.tensor(2., requires_grad=True)  # 叶子节点
    if ctx.glass:
        with torch.autograd.graph_inspect.record_source():
            y = x ** 2  # 中间节点
    else:
        y = x ** 2  # 中间节点
    say(f"1. build: y = x ** 2 recorded the node y.grad_fn = {y.grad_fn.name()}, whose "
        f"next_functions lead to x's {y.grad_fn.next_functions[0][0].name()}.")
    if ctx.glass:
        say("The article says the graph keeps only the history, not intermediate values. Not "
            "quite: each node keeps what its backward needs (d(x**2)/dx = 2x needs x) until "
            "backward frees it. The ledger, before backward:")
        torch.autograd.graph.summary(y)
        before = torch.autograd.graph.to_dict(y)["totals"]
    y.backward()  # 反向传播
    say(f"2. backward: x.grad = {x.grad.item():g} (= 2 * 2)")
    if ctx.glass:
        say("3. free: after backward the saved tensors are released (marked 'freed'):")
        torch.autograd.graph.summary(y)
        after = torch.autograd.graph.to_dict(y)["totals"]
        ctx.figures.update(saved_before=before["saved_tensors"], saved_after=after["saved_tensors"],
                           freed_after=after["freed_tensors"])
        say(f"saved tensors: {before['saved_tensors']} before backward, "
            f"{after['saved_tensors']} after ({after['freed_tensors']} freed; 0 B come back "
            "because the saved tensor was the leaf x itself, which lives on)")
    else:
        say("(the saved-tensor ledger is glassgrad's; skipped on torch)")
    ctx.figures["x_grad"] = x.grad.item()


def section_1_2_dynamic(torch, ctx) -> None:
    say("Static frameworks define the graph first; here it is built as the Python code runs, so "
        "a loop over a sentence builds one piece of graph per word, and every sentence its own "
        "graph. A breakpoint (pdb) anywhere in the loop sees real tensors.")
    echo("for word in variable_length_sentence:",
         "    hidden = model(word, hidden)  # a different path per input")
    sentences = ["graphs are built as code runs",
                 "each sentence",
                 "a longer sentence builds a longer graph with more nodes in it"]
    vocab = {w: i for i, w in enumerate(sorted({w for s in sentences for w in s.split()}))}
    embed = torch.nn.Embedding(len(vocab), 8)
    model = torch.nn.RNNCell(8, 16)
    numpy_init(torch, embed, 1)
    numpy_init(torch, model, 2)
    counts = []
    for sentence in sentences:
        ids = torch.tensor([vocab[w] for w in sentence.split()])
        variable_length_sentence = embed(ids).unsqueeze(1)  # (T, 1, 8): one row per word
        hidden = torch.zeros(1, 16)
        for word in variable_length_sentence:
            hidden = model(word, hidden)  # 每次循环构建不同的计算路径
        counts.append(count_nodes(hidden))
        say(f"{len(ids):>2} words -> {counts[-1]:>3} graph nodes behind hidden "
            f"(last node {hidden.grad_fn.name()})")
    ctx.figures["rnn_nodes"] = counts


def section_2_1_second_backward(torch, ctx) -> None:
    say("Two losses share one graph (in a GAN, the discriminator's and the generator's losses "
        "both go through D(G(z))). The first backward frees the shared part; the second fails.")
    echo("loss1.backward()  # graph freed", "loss2.backward()  # error")
    x = torch.tensor(2., requires_grad=True)
    shared = x ** 2  # the part both losses go through
    loss1, loss2 = shared * 3, shared ** 2
    loss1.backward()  # 计算图被释放
    try:
        loss2.backward()  # 报错
        message = ""
    except RuntimeError as e:
        message = str(e)
    print(textwrap.indent(textwrap.fill(message, 96, break_long_words=False,
                                        replace_whitespace=False), "  ! "))
    ctx.figures["second_backward_error"] = message
    echo("loss1.backward(retain_graph=True)  # keep the graph",
         "loss2.backward()                   # can backward again")
    x.grad = None
    shared = x ** 2
    loss1, loss2 = shared * 3, shared ** 2
    loss1.backward(retain_graph=True)  # 保留计算图
    g1 = x.grad.item()
    loss2.backward()  # 可以再次反向传播
    g2 = x.grad.item()
    say(f"x.grad after loss1: {g1:g} (d(3x^2)/dx); after loss2: {g2:g} = {g1:g} + {g2 - g1:g} "
        "(d(x^4)/dx): gradients accumulate in .grad across backward calls.")
    ctx.figures.update(retain_grad_first=g1, retain_grad_accumulated=g2)


ARTICLE_TABLE = [("", "retain_graph", "gradient accumulation"),
                 ("purpose", "several backward passes", "simulate a larger batch"),
                 ("memory", "higher", "lower"),
                 ("graph kept", "yes", "no")]


def section_3_accumulation(torch, ctx) -> None:
    for row in ARTICLE_TABLE:
        print(f"  {row[0]:<12}{row[1]:<26}{row[2]}")
    say("The standard loop: batch 64 as 4 micro-batches of 16; each micro-batch's loss is "
        "divided by accumulation_steps, its graph is freed by backward(), and .grad sums them.")
    inputs_all, targets_all, data_loader = loader(torch)
    model = mlp(torch, 4)
    criterion = torch.nn.CrossEntropyLoss()
    full = copy.deepcopy(model)
    full_loss = criterion(full(inputs_all), targets_all)
    full_saved = _saved_bytes(torch, ctx, full_loss)
    full_loss.backward()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    accumulation_steps = 4
    micro_saved = 0
    echo("loss = loss / accumulation_steps", "loss.backward()  # accumulate",
         "if (i+1) % accumulation_steps == 0: optimizer.step(); model.zero_grad()")
    model.zero_grad()  # 重置梯度
    for i, (inputs, targets) in enumerate(data_loader):
        outputs = model(inputs)
        loss = criterion(outputs, targets)
        loss = loss / accumulation_steps  # 关键步骤：scale损失并反向传播
        micro_saved = max(micro_saved, _saved_bytes(torch, ctx, loss))
        loss.backward()  # 梯度累加
        if (i + 1) % accumulation_steps == 0:
            accumulated = [p.grad.clone() for p in model.parameters()]  # for the comparison
            optimizer.step()  # 更新参数
            model.zero_grad()  # 清零梯度
    diff = max(float((a - p.grad).abs().max()) for a, p in zip(accumulated, full.parameters()))
    say(f"max |accumulated - full-batch gradient| = {diff:.2e} over "
        f"{sum(p.numel() for p in model.parameters())} parameters")
    if ctx.glass:
        say(f"saved for backward per forward: full batch {full_saved / 1024:.1f} KiB, "
            f"micro-batch {micro_saved / 1024:.1f} KiB (the memory the table means)")
    say("Tips from 3.2: a 4x larger effective batch may want a larger learning rate; BatchNorm in "
        "model.train() normalises each micro-batch by its own statistics, so there accumulation "
        "is not exactly the full batch (examples/grad_accumulation.py prints by how much).")
    ctx.figures.update(accumulation_max_abs_diff=diff, accumulation_saved_full=full_saved,
                       accumulation_saved_micro=micro_saved)


def _saved_bytes(torch, ctx, loss) -> int:
    if not ctx.glass:
        return 0
    return torch.autograd.graph.to_dict(loss)["totals"]["saved_graph_only_bytes"]


def section_4_create_graph(torch, ctx) -> None:
    x = torch.tensor(2., requires_grad=True)
    y = x ** 3
    (g_retain,) = torch.autograd.grad(y, x, retain_graph=True)
    (g_create,) = torch.autograd.grad(y, x, create_graph=True)
    say("retain_graph keeps the graph for another backward; create_graph also records the "
        "backward itself, so the gradient is a graph that can be differentiated again:")
    print(f"  grad(y, x, retain_graph=True) -> {g_retain.item():g}, requires_grad="
          f"{g_retain.requires_grad}")
    print(f"  grad(y, x, create_graph=True) -> {g_create.item():g}, grad_fn="
          f"{g_create.grad_fn.name()}")
    say("4.1 WGAN-GP: penalise the critic when its gradient norm at points between real and "
        "fake samples is not 1. The article's code:")
    batch, dim = 32, 2
    discriminator = torch.nn.Sequential(torch.nn.Linear(dim, 32), torch.nn.LeakyReLU(0.2),
                                        torch.nn.Linear(32, 32), torch.nn.LeakyReLU(0.2),
                                        torch.nn.Linear(32, 1))
    numpy_init(torch, discriminator, 5)
    real_data = randn(torch, (batch, dim), 6) + 2.0
    fake_data = randn(torch, (batch, dim), 7)
    epsilon = torch.from_numpy(np.random.default_rng(8).random((batch, 1)).astype(np.float32))
    echo("gradients = torch.autograd.grad(outputs=d_interpolated, inputs=interpolated,",
         "    grad_outputs=grad_outputs, create_graph=True, retain_graph=True,",
         "    only_inputs=True)[0]",
         "gradient_penalty = ((gradients.norm(2, dim=1) - 1) ** 2).mean()")
    # 计算插值样本的梯度
    interpolated = real_data * epsilon + fake_data * (1 - epsilon)
    interpolated.requires_grad_(True)

    d_interpolated = discriminator(interpolated)
    grad_outputs = torch.ones_like(d_interpolated)

    # 关键步骤：创建计算图以计算梯度范数
    gradients = torch.autograd.grad(
        outputs=d_interpolated,
        inputs=interpolated,
        grad_outputs=grad_outputs,
        create_graph=True,  # 保留梯度计算图
        retain_graph=True,  # 保留前向计算图
        only_inputs=True
    )[0]

    # 计算梯度惩罚项
    gradient_penalty = ((gradients.norm(2, dim=1) - 1) ** 2).mean()
    gradient_penalty.backward()
    norms = {name: None if p.grad is None else float(p.grad.norm())
             for name, p in discriminator.named_parameters()}
    say(f"gradients {tuple(gradients.shape)}, mean norm {gradients.norm(2, dim=1).mean():.4f}, "
        f"gradient_penalty = {gradient_penalty.item():.6f}; its gradient reaches the critic's "
        "weights (double backward through Linear and LeakyReLU). |grad| per parameter:")
    print("  " + ", ".join(f"{k} {'None' if v is None else f'{v:.3e}'}" for k, v in norms.items()))
    say("(with a piecewise-linear LeakyReLU the biases do not change d critic / d input, so "
        "their penalty gradient is zero: PyTorch stores zeros for the hidden biases, glassgrad "
        "finds no path and leaves None; the last bias is None on both)")
    ctx.figures.update(penalty=gradient_penalty.item(), penalty_grad_norms=norms)
    say("Without create_graph=True the gradients are constants and the penalty cannot reach "
        "the critic:")
    d_interpolated = discriminator(interpolated)
    constant = torch.autograd.grad(d_interpolated, interpolated, torch.ones_like(d_interpolated))[0]
    try:
        ((constant.norm(2, dim=1) - 1) ** 2).mean().backward()
    except RuntimeError as e:
        print("  ! " + str(e).splitlines()[0])


def section_4_2_higher_order(torch, ctx) -> None:
    echo("dy_dx = torch.autograd.grad(y, x, create_graph=True)[0]  # 12 (3x^2)",
         "d2y_dx2 = torch.autograd.grad(dy_dx, x)[0]  # 12 (6x)")
    x = torch.tensor(2., requires_grad=True)
    y = x ** 3

    # 一阶导数
    dy_dx = torch.autograd.grad(y, x, create_graph=True)[0]  # 12 (3x²)

    # 二阶导数
    d2y_dx2 = torch.autograd.grad(dy_dx, x)[0]  # 12 (6x)
    say(f"f(x) = x^3 at 2: f' = {dy_dx.item():g} (3x^2), f'' = {d2y_dx2.item():g} (6x)")
    ctx.figures.update(dy_dx=dy_dx.item(), d2y_dx2=d2y_dx2.item())


class Context:
    """What the sections share: the library, options, output folder, figures collected."""

    def __init__(self, torch, args):
        self.glass = torch.__name__ == "glassgrad"
        self.args = args
        self.out = args.out
        self.figures: dict = {}


SECTIONS = [
    ("1.1", "The life of a graph: build, backward, free", section_1_1_lifecycle),
    ("1.2", "Dynamic: the graph follows the Python code", section_1_2_dynamic),
    ("2.1", "The second-backward error and retain_graph", section_2_1_second_backward),
    ("2.2", "Memory of retained graphs, measured while the loop runs", section_2_2_memory),
    ("3", "Gradient accumulation equals the full batch", section_3_accumulation),
    ("3.2", "Mixed precision with torch.cuda.amp (GradScaler + autocast)", section_3_2_amp),
    ("4", "create_graph vs retain_graph; the WGAN-GP gradient penalty", section_4_create_graph),
    ("4.2", "Second derivative of x^3 at 2", section_4_2_higher_order),
    ("5", "MAML inner loop", section_5_maml),
    ("6", "Closing checklist: zero_grad, draw the graph, watch memory", section_checklist),
]


def selected(which: str | None) -> list:
    if which is None:
        return SECTIONS
    if which in ("end", "checklist"):
        which = "6"
    return [s for s in SECTIONS if s[0] == which or s[0].startswith(which + ".")]


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description="Run every section of the article with glassgrad (or torch) and show what "
        "each section's code does.", formatter_class=HelpFormatter)
    add_backend_arg(parser)
    parser.add_argument("--section", default=None,
                        help="run one section: 1.1 1.2 2.1 2.2 3 3.2 4 4.2 5 6 (the checklist); "
                        "a whole number runs its subsections too")
    parser.add_argument("--steps", type=int, default=20,
                        help="iterations of each memory loop in section 2.2")
    parser.add_argument("--quick", action="store_true", help="fewer iterations (smoke tests)")
    add_out_arg(parser, "runs/seed_walkthrough")
    args = parser.parse_args(argv)
    resolve_out(args, "runs/seed_walkthrough")
    if not selected(args.section):
        parser.error(f"no section {args.section!r}; choose from "
                     + ", ".join(s[0] for s in SECTIONS))
    if args.quick:
        args.steps = min(args.steps, 8)
    return args


def main(argv=None) -> dict:
    """Run the chosen sections; returns the key figures (also written to summary.json)."""
    args = parse_args(argv)
    with blas_threads():  # one BLAS thread: small matrices (see _common.blas_threads)
        return _main(args)


def _main(args) -> dict:
    torch = load_backend(args.backend)
    timer = Timer()
    out_dir(args.out)
    ctx = Context(torch, args)
    torch.manual_seed(0)
    for key, title, run in selected(args.section):
        print(f"\n{'=' * 100}\n§{key}  {title}\n{'=' * 100}")
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            run(torch, ctx)
    ctx.figures.update(backend=torch.__name__, seconds=round(timer.elapsed(), 2))
    write_json(os.path.join(args.out, "summary.json"), ctx.figures)
    print(f"\ndone in {ctx.figures['seconds']} s -> {args.out}/summary.json")
    return ctx.figures


if __name__ == "__main__":
    main()
