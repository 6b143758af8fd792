"""Data the example programs would download, made from data that ships with scikit-learn.

- ``cora_tgz()``: a gzipped tar holding ``cora/cora.content`` and ``cora/cora.cites`` in Cora's
  format (``<paper id> <0/1 features...> <class label>`` and ``<cited id> <citing id>``), built
  from the 1,797 bundled 8x8 digits: one node per digit, its 64 features the pixels at level 8 or
  more, its class ``digit_<label>``, and a citation from each digit to its two nearest neighbours
  in pixel space. Cora has 2,708 nodes, 1,433 features and 7 classes; this graph is smaller but
  keeps the format and the gcn program's 1,000/500/rest split.
- ``write_wikitext(folder)``: ``train.txt``, ``valid.txt``, ``test.txt`` in WikiText's
  tokenised one-paragraph-a-line style, from the data set descriptions scikit-learn ships.
Both are deterministic, so every run of a program sees the same bytes.
"""

from __future__ import annotations

import functools
import gzip
import io
import os
import re
import tarfile

import numpy as np

__all__ = ["cora_tgz", "write_wikitext"]

_NEIGHBOURS = 2


def _digits():
    from sklearn.datasets import load_digits

    bunch = load_digits()
    return bunch.data.astype(np.int64), bunch.target.astype(np.int64)


def _cora_files() -> tuple[str, str]:
    pixels, labels = _digits()
    ids = 10000 + 7 * np.arange(len(labels))
    features = (pixels >= 8).astype(np.int64)
    content = "".join(
        f"{pid}\t" + "\t".join(map(str, row)) + f"\tdigit_{label}\n"
        for pid, row, label in zip(ids, features, labels)
    )
    sq = (pixels * pixels).sum(1)
    dist = sq[:, None] + sq[None, :] - 2 * pixels @ pixels.T
    np.fill_diagonal(dist, np.iinfo(np.int64).max)
    nearest = np.argsort(dist, axis=1, kind="stable")[:, :_NEIGHBOURS]
    cites = "".join(f"{ids[j]}\t{ids[i]}\n" for i in range(len(ids)) for j in nearest[i])
    return content, cites


@functools.lru_cache(maxsize=1)
def cora_tgz() -> bytes:
    """The bytes of cora.tgz (see the module docstring)."""
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as zipped:
        with tarfile.open(fileobj=zipped, mode="w") as tar:
            for name, text in zip(("cora/cora.content", "cora/cora.cites"), _cora_files()):
                data = text.encode()
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


_SPLITS = {"valid": ("iris.rst", "wine_data.rst"), "test": ("diabetes.rst", "linnerud.rst")}


def _paragraphs(path: str) -> list[str]:
    with open(path, encoding="utf8") as f:
        blocks = re.split(r"\n\s*\n", f.read())
    lines = []
    for block in blocks:
        tokens = re.findall(r"\w+|[^\w\s]", block.lower())
        if tokens:
            lines.append(" " + " ".join(tokens) + " \n")
    return lines


def write_wikitext(folder: str) -> None:
    """Write train.txt, valid.txt and test.txt into ``folder`` (created if needed)."""
    import sklearn.datasets

    descr = os.path.join(os.path.dirname(sklearn.datasets.__file__), "descr")
    names = sorted(n for n in os.listdir(descr) if n.endswith(".rst"))
    held_out = {n for files in _SPLITS.values() for n in files}
    splits = {"train": [n for n in names if n not in held_out], **_SPLITS}
    os.makedirs(folder, exist_ok=True)
    for split, files in splits.items():
        with open(os.path.join(folder, f"{split}.txt"), "w", encoding="utf8") as f:
            for name in files:
                f.writelines(_paragraphs(os.path.join(descr, name)))
