"""Composites emitted whole: comparisons, pooling, the norms, embedding, LSTM (onnx/_patches.py)."""

from __future__ import annotations
