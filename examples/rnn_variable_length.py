"""A character-level LSTM whose graph is built by a Python loop: a different graph per input length.

The article's section 1.2: ``for word in variable_length_sentence: hidden = model(word, hidden)``
builds as many steps as the sentence has words, so every input gets its own graph. This example

1. runs that loop over lines of the Zen of Python (bundled with Python: ``import this``) and prints
   how many graph nodes each line's loss has;
2. trains a language model on the text with truncated backpropagation through time: the text is cut
   into chunks of random length, the hidden state is carried from chunk to chunk, and
   ``h.detach()`` stops gradients at each chunk's start;
3. shows what happens without ``detach()``: the second chunk's backward reaches into the first
   chunk's freed graph ("Trying to backward through the graph a second time"); ``retain_graph=True``
   then hits the in-place error once the optimizer has stepped, and without steps the graph grows by
   a whole chunk every step.

    python examples/rnn_variable_length.py                  # < 1 minute
    python examples/rnn_variable_length.py --backend torch  # the same code on PyTorch

Writes to ``--out`` (default runs/rnn, runs/rnn-torch with ``--backend torch``): rnn.png (loss per chunk; graph size per chunk with and
without detach) and summary.json.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
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


def zen_text() -> str:
    """The Zen of Python (``import this`` prints it; the module holds it rot13-encoded)."""
    import codecs

    with contextlib.redirect_stdout(io.StringIO()):
        import this
    return codecs.decode(this.s, "rot13")


def count_nodes(tensor) -> int:
    """Distinct grad_fn nodes reachable from ``tensor``."""
    seen, stack = set(), [tensor.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        stack.extend(fn for fn, _ in node.next_functions)
    return len(seen)


def build_model(torch, vocab: int, embed: int = 32, hidden: int = 128):
    """Embedding -> LSTMCell, stepped by a Python loop -> Linear: (T, B) chars -> (T, B, vocab)."""
    nn = torch.nn

    class CharLSTM(nn.Module):
        def __init__(self):
            super().__init__()
            self.hidden_size = hidden
            self.embed = nn.Embedding(vocab, embed)
            self.cell = nn.LSTMCell(embed, hidden)
            self.head = nn.Linear(hidden, vocab)

        def forward(self, chars, state):
            outputs = []
            for char in chars:  # the article's loop: one step, one piece of graph, per character
                state = self.cell(self.embed(char), state)
                outputs.append(state[0])
            return self.head(torch.stack(outputs)), state

        def initial_state(self, batch: int):
            zeros = torch.zeros(batch, self.hidden_size, dtype=self.head.weight.dtype)
            return zeros, zeros.clone()

    return CharLSTM()


def chunk_lengths(rng, total: int, bptt: int) -> list[int]:
    """Random chunk lengths (mean ``bptt``, spread bptt / 4, at least 4) summing to ``total``."""
    lengths = []
    while total > 0:
        n = min(total, max(4, round(rng.normal(bptt, bptt / 4))))
        lengths.append(n)
        total -= n
    return lengths


def train_tbptt(torch, model, opt, data, lengths, state, clip: float = 1.0, on_chunk=None):
    """One pass of truncated BPTT over ``data`` ((T + 1, B) int64 tensor) in chunks of
    ``lengths``; the hidden state is carried across chunks and detached at each chunk's start.
    Returns (per-chunk losses, last state)."""
    losses, pos = [], 0
    for n in lengths:
        x, y = data[pos:pos + n], data[pos + 1:pos + 1 + n]
        state = tuple(s.detach() for s in state)  # truncated BPTT: gradients stop here
        logits, state = model(x, state)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                 y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        losses.append(loss.item())
        if on_chunk is not None:
            on_chunk(n, loss)
        pos += n
    return losses, state


def line_graphs(torch, model, encode, lines) -> list[tuple[int, int]]:
    """(length, graph nodes of the loss) for each line run through the article's loop."""
    result = []
    for line in lines:
        chars = torch.tensor(encode(line)).reshape(-1, 1)
        logits, _ = model(chars[:-1], model.initial_state(1))
        loss = torch.nn.functional.cross_entropy(logits.reshape(len(line) - 1, -1),
                                                 chars[1:].reshape(-1))
        result.append((len(line), count_nodes(loss)))
    return result


def chunk_loss(torch, model, data, n: int, k: int, state):
    """Loss of the k-th chunk of length ``n`` of ``data`` (T + 1, B), from ``state``."""
    logits, state = model(data[k * n:(k + 1) * n], state)
    targets = data[k * n + 1:(k + 1) * n + 1].reshape(-1)
    return torch.nn.functional.cross_entropy(logits.reshape(targets.shape[0], -1), targets), state


def without_detach(torch, model, data, n: int, chunks: int = 4) -> dict:
    """Carry the hidden state across chunks without ``detach()``: the errors, and the growth of
    the graph. ``model`` is left unchanged (a copy takes the optimizer steps)."""
    report = {}
    state = model.initial_state(data.shape[1])
    loss, state = chunk_loss(torch, model, data, n, 0, state)
    loss.backward()
    loss, state = chunk_loss(torch, model, data, n, 1, state)  # state points into chunk 0's graph
    try:
        loss.backward()
        report["second_backward"] = "no error"
    except RuntimeError as e:
        report["second_backward"] = str(e)
    stepped = copy.deepcopy(model)
    opt = torch.optim.SGD(stepped.parameters(), lr=0.1)
    state = stepped.initial_state(data.shape[1])
    try:
        for k in range(2):
            loss, state = chunk_loss(torch, stepped, data, n, k, state)
            opt.zero_grad()
            loss.backward(retain_graph=True)
            opt.step()  # changes, in place, weights that chunk 0's retained graph saved
        report["retain_graph_with_steps"] = "no error"
    except RuntimeError as e:
        report["retain_graph_with_steps"] = str(e)
    growth = {"retain_graph": [], "detach": []}
    for mode, nodes in growth.items():
        state = model.initial_state(data.shape[1])
        for k in range(chunks):
            if mode == "detach":
                state = tuple(s.detach() for s in state)
            loss, state = chunk_loss(torch, model, data, n, k, state)
            nodes.append(count_nodes(loss))
            loss.backward(retain_graph=mode == "retain_graph")
    model.zero_grad()
    report["graph_nodes_per_chunk"] = growth
    return report


def generate(torch, model, encode, decode, prompt: str, length: int, temperature: float, seed: int):
    """Sample ``length`` characters after ``prompt`` (NumPy's generator: same on both backends)."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        state = model.initial_state(1)
        logits, state = model(torch.tensor(encode(prompt)).reshape(-1, 1), state)
        out = []
        for _ in range(length):
            probs = torch.softmax(logits[-1, 0].double() / temperature, dim=0).numpy()
            nxt = int(rng.choice(len(probs), p=probs / probs.sum()))
            out.append(nxt)
            logits, state = model(torch.tensor([[nxt]]), state)
    return prompt + decode(out)


def _print_error(message: str) -> None:
    """PyTorch's first sentence, then glassgrad's explanation (if any), indented and wrapped."""
    lines = message.splitlines()
    head = lines[0].split(". ")[0].split(": [")[0]
    print(f"      RuntimeError: {head}.")
    for line in lines[1:2]:
        print(textwrap.fill(line, 96, initial_indent="      ", subsequent_indent="      "))


def save_picture(losses, growth, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8))
    left.plot(np.asarray(losses) / np.log(2), lw=0.7)
    left.set_xlabel("chunk (truncated BPTT step)")
    left.set_ylabel("bits per character")
    left.set_title("training loss")
    for mode, nodes in growth.items():
        label = "h.detach() each chunk" if mode == "detach" else "no detach, retain_graph=True"
        right.plot(range(1, len(nodes) + 1), nodes, marker="o", label=label)
    right.set_xticks(range(1, len(nodes) + 1))
    right.set_xlabel("chunk")
    right.set_ylabel("graph nodes reachable from the loss")
    right.set_title("graph size per chunk")
    right.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="A character-level LSTM on variable-length "
                                     "input with truncated BPTT.",
                                     formatter_class=HelpFormatter)
    add_backend_arg(parser)
    parser.add_argument("--epochs", type=int, default=30, help="passes over the text")
    parser.add_argument("--streams", type=int, default=8, help="parallel streams (batch size)")
    parser.add_argument("--bptt", type=int, default=20, help="mean chunk length")
    parser.add_argument("--hidden", type=int, default=128, help="LSTM hidden size")
    parser.add_argument("--embed", type=int, default=32, help="character embedding size")
    parser.add_argument("--lr", type=float, default=1e-2, help="Adam learning rate")
    parser.add_argument("--sample", type=int, default=160, help="characters to generate")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the weights, the chunk lengths and the sampling")
    add_out_arg(parser, "runs/rnn")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    resolve_out(args, "runs/rnn")
    return args


def main(argv=None) -> dict:
    args = parse_args(argv)
    with blas_threads():
        return run(load_backend(args.backend), args)


def run(torch, args) -> dict:
    out = out_dir(args.out)
    text = zen_text()
    vocab = sorted(set(text))
    index = {c: i for i, c in enumerate(vocab)}

    def encode(s):
        return [index[c] for c in s]

    def decode(ids):
        return "".join(vocab[i] for i in ids)

    torch.manual_seed(args.seed)
    model = build_model(torch, len(vocab), args.embed, args.hidden)
    lines = [line for line in text.splitlines() if line][1:]
    print(f"1. the article's loop over variable-length lines ({args.backend}): one graph per input")
    shown = sorted(lines, key=len)
    for length, nodes in line_graphs(torch, model, encode, [shown[0], shown[len(shown) // 2],
                                                           shown[-1]]):
        print(f"   a line of {length:>2} characters -> a loss graph of {nodes:>4} nodes")

    ids = np.asarray(encode(text), dtype=np.int64)
    steps = (len(ids) - 1) // args.streams
    # column b is stream b: characters b * steps ... b * steps + steps (inputs and next chars)
    data = torch.from_numpy(np.stack([ids[b * steps:(b + 1) * steps + 1]
                                      for b in range(args.streams)], axis=1))
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    rng = np.random.default_rng(args.seed)
    print(f"2. truncated BPTT: {len(text)} characters as {args.streams} streams of {steps}, "
          f"chunks of ~{args.bptt} (random lengths), h.detach() at each chunk's start")
    epochs = range(args.epochs)
    if not args.quiet:
        from tqdm import tqdm

        epochs = tqdm(epochs, desc="char-LSTM", unit="epoch")
    timer, losses, sizes = Timer(), [], {}

    def on_chunk(n, loss):
        sizes.setdefault(n, count_nodes(loss))

    for _ in epochs:
        state = model.initial_state(args.streams)
        chunk_losses, state = train_tbptt(torch, model, opt, data,
                                          chunk_lengths(rng, steps, args.bptt), state,
                                          on_chunk=on_chunk if not sizes else None)
        losses.extend(chunk_losses)
        if not args.quiet:
            epochs.set_postfix(bits_per_char=f"{np.mean(chunk_losses) / np.log(2):.3f}")
    seconds = timer.elapsed()
    final_bits = float(np.mean(losses[-max(1, len(losses) // args.epochs):]) / np.log(2))
    print(f"   {len(losses)} chunks in {seconds:.1f} s; bits per character "
          f"{losses[0] / np.log(2):.2f} -> {final_bits:.2f} (uniform: {np.log2(len(vocab)):.2f})")
    print("   graph nodes per chunk length: " + ", ".join(
        f"{n}->{sizes[n]}" for n in sorted(sizes)[:6]))
    sample = generate(torch, model, encode, decode, "Beautiful", args.sample, 0.5, args.seed)
    print("   sampled (temperature 0.5):\n      " + sample.replace("\n", "\n      "))

    print("3. carrying the hidden state without detach()")
    with warnings.catch_warnings(record=True) as caught:  # glassgrad's own diagnostics
        warnings.simplefilter("always")
        report = without_detach(torch, model, data, args.bptt)
    print("   second chunk's backward ->")
    _print_error(report["second_backward"])
    print("   why: the state handed to chunk 2 was computed in chunk 1, whose backward freed its\n"
          "   saved tensors; chunk 2's graph reaches back into it. Fix: state = h.detach().")
    print("   retain_graph=True instead, with an optimizer step after each chunk ->")
    _print_error(report["retain_graph_with_steps"])
    growth = report["graph_nodes_per_chunk"]
    print(f"   graph nodes per chunk, retain_graph (full BPTT): {growth['retain_graph']}; "
          f"with detach: {growth['detach']}")
    growing = [str(w.message) for w in caught if "keeps growing" in str(w.message)]
    if growing:
        print("   glassgrad noticed on its own (a warning at the backward line):\n      "
              + textwrap.fill(growing[0].split(". A tensor")[0] + ".", 92,
                              subsequent_indent="      "))
    save_picture(losses, growth, os.path.join(out, "rnn.png"))
    summary = {"backend": args.backend, "epochs": args.epochs, "chunks": len(losses),
               "seconds": round(seconds, 2), "initial_bits_per_char": losses[0] / np.log(2),
               "final_bits_per_char": final_bits, "sample": sample,
               "graph_nodes_by_chunk_length": {str(k): v for k, v in sorted(sizes.items())},
               **report}
    write_json(os.path.join(out, "summary.json"), summary)
    print(f"-> {out}/rnn.png, summary.json")
    return summary


if __name__ == "__main__":
    main()
