"""Sections 2.2, 3.2, 5 and the closing checklist of ``seed_walkthrough.py``, and its helpers.

Each section is a function ``(torch, ctx)``: ``torch`` is glassgrad or PyTorch, ``ctx`` the
walkthrough's Context (``glass``, ``args``, ``out``, ``figures``).
"""

from __future__ import annotations

import copy
import gc
import os
import shutil
import textwrap
import time
import warnings

import numpy as np


def say(text: str) -> None:
    """Print a short explanation, wrapped at 96 columns."""
    print(textwrap.fill(text, 96, break_long_words=False))


def echo(*lines: str) -> None:
    """Print the article's code lines about to run."""
    for line in lines:
        print("  | " + line)


def count_nodes(tensor) -> int:
    """Distinct grad_fn nodes reachable from ``tensor`` (works on torch and glassgrad)."""
    seen, stack = set(), [tensor.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        stack.extend(fn for fn, _ in node.next_functions)
    return len(seen)


def numpy_init(torch, model, seed: int) -> None:
    """Set every parameter from NumPy's generator, so glassgrad and torch start from equal weights."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in model.parameters():
            shape = tuple(p.shape)
            fan_in = shape[1] if len(shape) > 1 else shape[0]
            value = rng.uniform(-1, 1, shape) / np.sqrt(fan_in)
            p.copy_(torch.from_numpy(value.astype(np.float32)))


def randn(torch, shape, seed: int):
    """A float32 tensor of standard normal values from NumPy's generator."""
    return torch.from_numpy(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def mlp(torch, seed: int, d_in: int = 10, hidden: int = 32, d_out: int = 3):
    """Linear -> Tanh -> Linear with NumPy-seeded weights: (N, d_in) -> (N, d_out) logits."""
    model = torch.nn.Sequential(torch.nn.Linear(d_in, hidden), torch.nn.Tanh(),
                                torch.nn.Linear(hidden, d_out))
    numpy_init(torch, model, seed)
    return model


def loader(torch, n: int = 64, batch: int = 16, seed: int = 3):
    """(inputs (n, 10), targets (n,) in 0..2, a DataLoader of micro-batches, in order)."""
    rng = np.random.default_rng(seed)
    inputs = torch.from_numpy(rng.standard_normal((n, 10)).astype(np.float32))
    targets = torch.from_numpy(rng.integers(0, 3, n).astype(np.int64))
    data = torch.utils.data.TensorDataset(inputs, targets)
    return inputs, targets, torch.utils.data.DataLoader(data, batch_size=batch, shuffle=False)


def _print_warnings(caught) -> list:
    messages = []
    for w in caught:
        text = str(w.message)
        if text not in messages:
            messages.append(text)
            print(textwrap.indent(textwrap.fill(text, 96, break_long_words=False,
                                                replace_whitespace=False), "  ~ "))
    return messages


class _Series:
    """Bytes alive above the loop's start (glassgrad), nodes behind the loss, seconds per step."""

    def __init__(self, torch, glass: bool):
        self.torch, self.glass = torch, glass
        gc.collect()  # NOTE: garbage of earlier sections must not be freed inside the loop
        self.base = torch.memory_allocated() if glass else 0
        self.bytes, self.nodes, self.seconds = [], [], []
        self.t = time.perf_counter()

    def record(self, loss) -> None:
        if self.glass:
            self.bytes.append(self.torch.memory_allocated() - self.base)
        self.nodes.append(count_nodes(loss))
        now = time.perf_counter()
        self.seconds.append(now - self.t)
        self.t = now

    def finish(self) -> None:
        """Note the bytes that graph nodes keep for backward now, at the loop's last iteration."""
        self.saved = self.torch.memory.breakdown()["saved_for_backward"] if self.glass else None


def section_2_2_memory(torch, ctx) -> None:
    steps, hidden_size = ctx.args.steps, 128
    criterion = lambda output: output.pow(2).mean()  # the article's criterion(output)
    input = randn(torch, (32, hidden_size), 10)  # the article's variable name
    runs = {}
    say("Four loops, each measured after every backward: the bytes of live tensor buffers above "
        "the loop's start (glassgrad.memory_allocated()) and the nodes behind the loss.")
    caught_all = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        echo("for _ in range(100):", "    output = model(input)", "    loss = criterion(output)",
             "    loss.backward(retain_graph=True)  # memory leak!")
        model = torch.nn.Linear(hidden_size, hidden_size)
        numpy_init(torch, model, 11)
        s = runs["article: retain_graph, fresh forward"] = _Series(torch, ctx.glass)
        for _ in range(steps):
            output = model(input)
            loss = criterion(output)
            loss.backward(retain_graph=True)  # 内存泄漏！
            s.record(loss)
        s.finish()
        del output, loss
        say("A fresh forward each iteration: the old graph goes when `loss` is reassigned, so this "
            "holds one graph too many but does not grow. It does grow when the graph reaches "
            "into earlier iterations, e.g. through a carried RNN hidden state. Without "
            "retain_graph that fails at the second iteration:")
        hidden = torch.zeros(32, hidden_size)
        try:
            for _ in range(2):
                hidden = torch.tanh(model(hidden) + input)
                criterion(hidden).backward()
        except RuntimeError as e:
            print(textwrap.indent(textwrap.fill(str(e).splitlines()[-1], 96), "  ! "))
        del hidden
        echo("hidden = torch.tanh(model(hidden) + input)  # carried across iterations",
             "loss = criterion(hidden)", "loss.backward(retain_graph=True)  # 'fixes' the error")
        say("...and retain_graph=True 'fixes' it into a real leak; hidden.detach() is the fix.")
        model = torch.nn.Linear(hidden_size, hidden_size)
        numpy_init(torch, model, 11)
        hidden = torch.zeros(32, hidden_size)
        s = runs["carried hidden + retain_graph (leak)"] = _Series(torch, ctx.glass)
        for _ in range(steps):
            hidden = torch.tanh(model(hidden) + input)
            loss = criterion(hidden)
            loss.backward(retain_graph=True)
            s.record(loss)
        s.finish()
        del hidden, loss
        model = torch.nn.Linear(hidden_size, hidden_size)
        numpy_init(torch, model, 11)
        hidden = torch.zeros(32, hidden_size)
        s = runs["carried hidden.detach(), no retain"] = _Series(torch, ctx.glass)
        for _ in range(steps):
            hidden = torch.tanh(model(hidden.detach()) + input)  # truncated BPTT
            loss = criterion(hidden)
            loss.backward()
            s.record(loss)
        s.finish()
        del hidden, loss
        echo("loss1.backward(retain_graph=True)   # the article's correct pattern",
             "loss2.backward(retain_graph=False)", "optimizer.step()", "optimizer.zero_grad()")
        model = torch.nn.Linear(hidden_size, hidden_size)
        numpy_init(torch, model, 11)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        s = runs["article's pattern: retain once, then free"] = _Series(torch, ctx.glass)
        for _ in range(steps):
            output = model(input)
            loss1, loss2 = criterion(output), output.abs().mean()
            loss1.backward(retain_graph=True)  # 第一次反向传播
            loss2.backward(retain_graph=False)  # 第二次反向传播后立即释放
            optimizer.step()
            optimizer.zero_grad()
            s.record(loss2)
        s.finish()
        del output, loss1, loss2
        caught_all = list(caught)
    print(f"\n  {'':<44}{'KiB alive above start':>20}{'saved now':>11}{'nodes behind':>14}")
    print(f"  {'loop':<44}{'iter 1':>10}{f'iter {steps}':>10}{'(KiB)':>11}{'the loss':>14}")
    figures = {}
    for name, s in runs.items():
        mem = (f"{s.bytes[0] / 1024:>10.1f}{s.bytes[-1] / 1024:>10.1f}{s.saved / 1024:>11.1f}"
               if ctx.glass else f"{'-':>10}{'-':>10}{'-':>11}")
        print(f"  {name:<44}{mem}{f'{s.nodes[0]} -> {s.nodes[-1]}':>14}")
        figures[name] = {"bytes": s.bytes, "nodes": s.nodes, "saved_at_end": s.saved}
    if ctx.glass:
        say("saved now: what graph nodes keep for backward after the last iteration "
            "(memory_stats()'s breakdown; the input's 16 KiB counts where a node saved it). Above "
            "the start, 64.5 KiB is the .grad of weight and bias (the last loop's zero_grad() "
            "sets it to None); the article's loop adds one retained graph, the leak one per "
            "iteration, the article's pattern only loss1's own branch (the output its pow saved).")
    else:
        say("(PyTorch has no memory counter on the CPU: torch.cuda.memory_allocated() is 0; the "
            "node counts tell the same story)")
    ctx.figures["memory_loops"] = figures
    if caught_all:
        say("glassgrad's diagnostics said, while the loops ran:")
        ctx.figures["memory_warnings"] = _print_warnings(caught_all)
    if ctx.glass:
        print(torch.memory.memory_summary(abbreviated=True))
    _plot_memory(runs, ctx)


def _plot_memory(runs, ctx) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    for name, s in runs.items():
        values = [b / 1024 for b in s.bytes] if ctx.glass else s.nodes
        ax.plot(range(1, len(values) + 1), values, marker="o", markersize=3, label=name)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_xlabel("iteration")
    ax.set_ylabel("KiB alive above the loop's start" if ctx.glass else "nodes behind the loss")
    ax.set_title("retain_graph=True leaks only when the graph reaches across iterations",
                 fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(ctx.out, "memory.png"), dpi=120)
    plt.close(fig)
    print(f"  -> {os.path.join(ctx.out, 'memory.png')}")


def section_3_2_amp(torch, ctx) -> None:
    say("The article's mixed-precision loop, unchanged. glassgrad maps torch.cuda.amp to the CPU "
        "(float16 autocast + dynamic loss scaling); PyTorch without CUDA disables both.")
    _, _, data_loader = loader(torch)
    model = mlp(torch, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = torch.nn.CrossEntropyLoss()
    accumulation_steps = 2
    losses, dtypes = [], {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scaler = torch.cuda.amp.GradScaler()

        for i, (inputs, targets) in enumerate(data_loader):
            with torch.cuda.amp.autocast():
                outputs = model(inputs)
                loss = criterion(outputs, targets) / accumulation_steps

            scaler.scale(loss).backward()
            dtypes.setdefault("outputs", str(outputs.dtype))
            dtypes.setdefault("loss", str(loss.dtype))
            dtypes.setdefault("param.grad", str(next(model.parameters()).grad.dtype))

            if (i + 1) % accumulation_steps == 0:
                scaler.step(optimizer)
                scaler.update()
                model.zero_grad()
            losses.append(loss.item() * accumulation_steps)
    say("The warnings it raises:")
    messages = _print_warnings(caught)
    say(f"dtypes under autocast: outputs {dtypes['outputs']}, loss {dtypes['loss']}; parameters "
        f"stay {next(model.parameters()).dtype} and so do their .grad ({dtypes['param.grad']}).")
    history = getattr(scaler, "history", None)
    skipped = sum(r.skipped for r in history) if history else 0
    say(f"loss per micro-batch {', '.join(f'{v:.4f}' for v in losses)}; scale "
        f"{scaler.get_scale():g}, optimizer steps skipped for inf/NaN: {skipped}"
        + ("" if history is not None else " (torch keeps no history)"))
    ctx.figures.update(amp_warnings=messages, amp_dtypes=dtypes, amp_losses=losses,
                       amp_scale=scaler.get_scale())


def section_5_maml(torch, ctx) -> None:
    say("The article's inner loop, verbatim: adapt a copy of the model to one task (a sinusoid, "
        "10 points) by plain SGD. It is first-order; examples/maml.py adds true second-order MAML.")
    model = torch.nn.Sequential(torch.nn.Linear(1, 40), torch.nn.ReLU(), torch.nn.Linear(40, 40),
                                torch.nn.ReLU(), torch.nn.Linear(40, 1))
    numpy_init(torch, model, 12)
    rng = np.random.default_rng(13)
    support = rng.uniform(-5, 5, (10, 1)).astype(np.float32)
    task = (torch.from_numpy(support), torch.from_numpy(3.0 * np.sin(support - 0.5)))
    losses = []

    def compute_loss(m, task):
        loss = torch.nn.functional.mse_loss(m(task[0]), task[1])
        losses.append(loss.item())
        return loss

    def maml_inner_loop(model, task, inner_lr, inner_steps):
        cloned_model = copy.deepcopy(model)
        optimizer = torch.optim.SGD(cloned_model.parameters(), lr=inner_lr)

        for _ in range(inner_steps):
            loss = compute_loss(cloned_model, task)

            # 关键区别：不调用optimizer.step()
            loss.backward(retain_graph=True if _ < inner_steps-1 else False)  # noqa: SIM210

            # 手动更新参数（模拟SGD）
            with torch.no_grad():
                for param in cloned_model.parameters():
                    if param.grad is not None:
                        param -= inner_lr * param.grad

            optimizer.zero_grad()

        return cloned_model

    before = [p.detach().clone() for p in model.parameters()]
    stats0 = torch.memory.memory_stats() if ctx.glass else None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        adapted = maml_inner_loop(model, task, inner_lr=0.02, inner_steps=5)
        final = compute_loss(adapted, task).item()
    unchanged = max(float((a - p.detach()).abs().max()) for a, p in zip(before, model.parameters()))
    say(f"support loss per inner step: {' -> '.join(f'{v:.3f}' for v in losses)}; the original "
        f"model is untouched by the deepcopy's updates (max change {unchanged:g}).")
    ctx.figures.update(maml_losses=losses, maml_final_loss=final, maml_original_change=unchanged)
    if ctx.glass:
        stats = torch.memory.memory_stats()
        dropped = (stats["retained_graphs.dropped_unused"]
                   - stats0["retained_graphs.dropped_unused"])
        kept = (stats["retained_graphs.dropped_unused_bytes"]
                - stats0["retained_graphs.dropped_unused_bytes"])
        say(f"glass box: each step runs a fresh forward, so retain_graph=True kept {dropped} graphs "
            f"({kept / 1024:.1f} KiB) that no later backward used: here it is not needed.")
        ctx.figures["maml_retained_unused"] = dropped
    _print_warnings(caught)


def section_checklist(torch, ctx) -> None:
    say("1. zero_grad before backward: .grad adds up across backward calls.")
    inputs, targets, _ = loader(torch)
    model = mlp(torch, 4)
    criterion = torch.nn.CrossEntropyLoss()
    for _ in range(2):  # forgot optimizer.zero_grad()
        criterion(model(inputs), targets).backward()
    twice = model[0].weight.grad.norm().item()
    model.zero_grad()
    loss = criterion(model(inputs), targets)
    loss.backward()
    once = model[0].weight.grad.norm().item()
    say(f"   |grad| after two steps without zero_grad {twice:.4f} = {twice / once:.2f} x the "
        f"true {once:.4f}")
    ctx.figures["forgot_zero_grad_ratio"] = twice / once
    say("2. draw the graph (torchviz's make_dot; glassgrad.viz.make_dot has its signature):")
    echo("x = torch.tensor(1., requires_grad=True)", "y = x ** 2", "z = y + x",
         "make_dot(z, params={'x': x})")
    if ctx.glass:
        from glassgrad.viz import make_dot
    else:
        try:
            from torchviz import make_dot
        except ImportError:
            make_dot = None
            say("   (torchviz is not installed: skipped on torch)")
    files = []
    if make_dot is not None:
        x = torch.tensor(1., requires_grad=True)
        y = x ** 2
        z = y + x
        dot = make_dot(z, params={'x': x})  # 保存为PDF检查图结构
        files += _save_dot(dot, ctx.out, "graph")
        if ctx.glass:
            z.backward()
            after = make_dot(z, params={'x': x}, show_saved=True)
            files += _save_dot(after, ctx.out, "graph_after_backward")
            say("   after backward, show_saved=True draws the freed saved tensors as dashed ghosts "
                "(torchviz raises there).")
    if ctx.glass:
        from glassgrad.viz_html import save_html

        path = save_html(loss, os.path.join(ctx.out, "step.html"),
                                        params=dict(model.named_parameters()),
                                        title="glassgrad: one step of the section 3 MLP")
        files.append(path)
        say("   the HTML view of one training step (nodes, saved bytes, gradient norm per "
            "parameter) opens in a browser without a server.")
    for f in files:
        print(f"   -> {f}")
    say("3. watch memory:")
    echo("torch.cuda.memory_allocated()")
    allocated = torch.cuda.memory_allocated()
    say(f"   torch.cuda.memory_allocated() = {allocated} bytes"
        + ("" if ctx.glass else " (PyTorch counts CUDA memory only: 0 on the CPU)"))
    ctx.figures.update(memory_allocated=allocated, files=[os.path.basename(f) for f in files])
    say("The article's closing story: a misplaced retain_graph slowed training by 40%; gradient "
        "accumulation fixed the memory. Sections 2.2 and 3 show both, with numbers.")


def _save_dot(dot, out: str, name: str) -> list:
    path = os.path.join(out, name + ".dot")
    with open(path, "w") as f:
        f.write(dot.source)
    files = [path]
    if shutil.which("dot"):
        for fmt in ("svg", "png"):
            files.append(dot.render(filename=os.path.join(out, name), format=fmt, cleanup=True))
    else:  # the Python package is installed, Graphviz's program is a system package
        print(f"   wrote {path}; Graphviz's `dot` program is not installed, so no svg/png "
              "(apt-get install graphviz, brew install graphviz or conda install graphviz)")
    return files
