"""A self-contained HTML page of one training step's graph: nodes, saved bytes, gradient norms.

``save_html(loss, "step.html", params=dict(model.named_parameters()))`` after ``loss.backward()``
writes one file that opens in any browser without a server or network: the graph as inline SVG
(laid out here, no Graphviz needed; leaves on top, the loss at the bottom, torchviz's colours), an
orange bar on each node for the bytes it saved (dashed once backward freed them), a table of
parameters with their gradient norms, and a sortable table of nodes with their saved tensors and
source lines (click a node in the picture to find its row). Called before backward, the page shows
the saved tensors alive and no gradients yet.
"""

from __future__ import annotations

import html
import json
import math

from .autograd.graph_inspect import _format_bytes, _Ledger, _norm

_CHAR_W = 7.0  # px per character of 11px monospace
_ROW_H = 64
_BOX_H = 30
_GAP = 18


def _ranks(rows: list) -> list:
    """Layer of each node, counted up from the roots: every node sits just above its lowest
    consumer, so a parameter is drawn next to the op that reads it."""
    consumers: list = [[] for _ in rows]
    for row in rows:
        for e in row["inputs"]:
            if e is not None and e["node"] is not None:
                consumers[e["node"]].append(row["index"])
    depth = [0] * len(rows)
    for row in reversed(rows):  # consumers come after their inputs in forward order
        i = row["index"]
        depth[i] = 1 + max((depth[c] for c in consumers[i]), default=-1)
    top = max(depth, default=0)
    return [top - d for d in depth]


def _layout(rows: list, labels: list) -> tuple:
    """x, y (centres), widths, and the drawing size: layers ordered by barycentre sweeps."""
    rank = _ranks(rows)
    layers: list = [[] for _ in range(max(rank, default=0) + 1)]
    for i in range(len(rows)):
        layers[rank[i]].append(i)
    nbrs: list = [[] for _ in rows]
    for row in rows:
        for e in row["inputs"]:
            if e is not None and e["node"] is not None:
                nbrs[row["index"]].append(e["node"])
                nbrs[e["node"]].append(row["index"])
    pos = {i: k for layer in layers for k, i in enumerate(layer)}
    for sweep in range(6):
        order = layers if sweep % 2 == 0 else layers[::-1]
        for layer in order:
            def bary(i, layer=layer):
                near = [pos[j] for j in nbrs[i] if rank[j] != rank[i]]
                return sum(near) / len(near) if near else pos[i]
            layer.sort(key=bary)
            for k, i in enumerate(layer):
                pos[i] = k
    width = [max(len(line) for line in label.split("\n")) * _CHAR_W + 16 for label in labels]
    spans = [sum(width[i] for i in layer) + _GAP * max(len(layer) - 1, 0) for layer in layers]
    total_w = max(spans, default=0) + 40
    x = [0.0] * len(rows)
    y = [0.0] * len(rows)
    for r, layer in enumerate(layers):
        cursor = (total_w - spans[r]) / 2
        for i in layer:
            x[i] = cursor + width[i] / 2
            y[i] = 30 + r * _ROW_H
            cursor += width[i] + _GAP
    return x, y, width, total_w, 30 + len(layers) * _ROW_H + 40


def _svg(data: dict) -> str:
    rows = data["nodes"]
    labels = [r.get("param") or r["name"] if r["kind"] == "leaf" else r["name"] for r in rows]
    x, y, width, total_w, total_h = _layout(rows, labels)
    most = max((_saved_bytes(r)[0] for r in rows), default=0) or 1
    out = [(f'<svg id="graph" xmlns="http://www.w3.org/2000/svg" width="{total_w:.0f}" '
            f'height="{total_h:.0f}" viewBox="0 0 {total_w:.0f} {total_h:.0f}">')]
    out.append('<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
               'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker>'
               '</defs>')
    for row in rows:
        i = row["index"]
        for e in row["inputs"]:
            if e is None or e["node"] is None:
                continue
            j = e["node"]
            x0, y0, x1, y1 = x[j], y[j] + _BOX_H / 2, x[i], y[i] - _BOX_H / 2
            mid = (y0 + y1) / 2
            out.append(f'<path class="edge" d="M{x0:.1f},{y0:.1f} C{x0:.1f},{mid:.1f} '
                       f'{x1:.1f},{mid:.1f} {x1:.1f},{y1:.1f}" fill="none" stroke="#777" '
                       'stroke-width="1" marker-end="url(#arrow)"/>')
    roots = {r["node"] for r in data["roots"]}
    for row in rows:
        i = row["index"]
        fill = "lightblue" if row["kind"] == "leaf" else "#d3d3d3"
        stroke = "#4a7a1e" if i in roots else "#333"
        left, top = x[i] - width[i] / 2, y[i] - _BOX_H / 2
        saved, freed = _saved_bytes(row)
        tip = f"#{i} {row['name']}"
        if row["output"]:
            tip += f" -> {row['output']['shape']} {row['output']['dtype']}"
        if saved:
            tip += f"\nsaved {_format_bytes(saved)}" + (" (freed)" if freed else "")
        if row["source"]:
            tip += f"\n{row['source']}"
        out.append(f'<g class="node" data-index="{i}"><title>{html.escape(tip)}</title>'
                   f'<rect x="{left:.1f}" y="{top:.1f}" width="{width[i]:.1f}" height="{_BOX_H}" '
                   f'rx="3" fill="{fill}" stroke="{stroke}" stroke-width="{2 if i in roots else 1}"/>'
                   f'<text x="{x[i]:.1f}" y="{y[i] + 4:.1f}" text-anchor="middle">'
                   f'{html.escape(labels[i])}</text>')
        if saved:
            bar = max(4.0, (width[i] - 4) * math.log1p(saved) / math.log1p(most))
            dash = ' stroke="#b36b00" stroke-dasharray="3,2" fill="#fff3e0"' if freed else \
                ' fill="orange"'
            out.append(f'<rect class="saved-bar" x="{left + 2:.1f}" y="{top + _BOX_H - 6:.1f}" '
                       f'width="{bar:.1f}" height="4"{dash}/>')
        out.append("</g>")
    out.append("</svg>")
    return "".join(out)


def _saved_bytes(row: dict) -> tuple:
    """(bytes this node's saved tensors hold or held, freed?)"""
    live = sum(s["nbytes"] or 0 for s in row["saved"] if not s["freed"])
    gone = sum(s["nbytes"] or 0 for s in row["saved"] if s["freed"])
    return (live, False) if live or not gone else (gone, True)


def _param_rows(data: dict, params: dict | None) -> list:
    if params:
        return [{"name": k, "shape": list(p.shape), "numel": int(p.numel()),
                 "grad_norm": _norm(p._grad)}
                for k, p in params.items()]
    return [{"name": r["param"], "shape": r["output"]["shape"],
             "numel": math.prod(r["output"]["shape"]), "grad_norm": r["grad_norm"]}
            for r in data["nodes"] if r["kind"] == "leaf"]


def make_html(var, params: dict | None = None, title: str = "glassgrad: one training step") -> str:
    """A self-contained HTML page (str) of the graph behind ``var`` (a Tensor or tuple of them):
    inline SVG of the nodes, saved bytes per node, gradient norms per parameter (``params``:
    name -> Tensor, e.g. ``dict(model.named_parameters())``), a sortable node table. No network,
    no server, no Graphviz. glassgrad's addition (PyTorch has no counterpart)."""
    roots = tuple(var) if isinstance(var, (tuple, list)) else (var,)
    data = _Ledger(roots, params).build()
    tot = data["totals"]
    facts = [("nodes", tot["nodes"]), ("leaves", tot["leaves"]),
             ("saved now", _format_bytes(tot["saved_bytes"])),
             ("of it leaves (parameters)", _format_bytes(tot["saved_param_bytes"])),
             ("freed by backward", _format_bytes(tot["freed_bytes"]))]
    payload = {"title": title, "ledger": data, "params": _param_rows(data, params)}
    text = json.dumps(payload).replace("</", "<\\/")
    page = _PAGE.replace("@TITLE@", html.escape(title))
    page = page.replace("@FACTS@", "".join(
        f"<span><b>{html.escape(str(v))}</b> {html.escape(k)}</span>" for k, v in facts))
    page = page.replace("@SVG@", _svg(data))
    return page.replace("@DATA@", text)


def save_html(var, path: str, params: dict | None = None,
              title: str = "glassgrad: one training step") -> str:
    """Write ``make_html(var, params, title)`` to ``path`` (UTF-8) and return the path."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(make_html(var, params, title))
    return path


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>@TITLE@</title>
<style>
body{font-family:system-ui,sans-serif;margin:16px;color:#222;background:#fafafa}
h1{font-size:20px;margin:0 0 8px} h2{font-size:15px;margin:18px 0 6px}
.facts span{display:inline-block;margin-right:18px;font-size:14px}
#wrap{display:flex;gap:16px;align-items:flex-start}
#pic{overflow:auto;max-height:620px;border:1px solid #ccc;background:#fff;flex:1 1 60%}
#side{flex:1 1 40%;min-width:320px}
svg text{font:11px monospace} .node{cursor:pointer} .node.hit rect:first-of-type{stroke:#e65100;stroke-width:3}
table{border-collapse:collapse;font:12px monospace;width:100%;background:#fff}
th,td{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}
th{background:#eee;cursor:pointer} tr.hit td{background:#ffe0b2}
.bar{display:inline-block;height:9px;background:#1e88e5;vertical-align:middle;margin-right:6px}
.none{color:#c62828} .freed{color:#999;text-decoration:line-through}
</style></head><body>
<h1>@TITLE@</h1>
<div class="facts">@FACTS@</div>
<div id="wrap"><div id="pic">@SVG@</div>
<div id="side"><h2>Gradient norms per parameter</h2><table id="params"><thead><tr><th>parameter</th>
<th>shape</th><th>grad norm</th></tr></thead><tbody></tbody></table>
<h2>Selected node</h2><pre id="detail">click a node in the graph</pre></div></div>
<h2>Nodes (forward order; click a header to sort)</h2>
<table id="nodes"><thead><tr><th data-k="index">#</th><th data-k="name">node</th>
<th data-k="out">output</th><th data-k="bytes">saved bytes</th><th data-k="saved">saved tensors</th>
<th data-k="source">source</th></tr></thead><tbody></tbody></table>
<script type="application/json" id="data">@DATA@</script>
<script>
(function(){
const D=JSON.parse(document.getElementById('data').textContent), L=D.ledger;
const fmt=b=>b==null?'?':b<1024?b+' B':b<1048576?(b/1024).toFixed(1)+' KiB':(b/1048576).toFixed(1)+' MiB';
const esc=s=>String(s).replace(/[&<>]/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;'}[c]));
const top=Math.max(1e-30,...D.params.map(p=>p.grad_norm||0));
const pb=document.querySelector('#params tbody');
for(const p of D.params){const tr=document.createElement('tr');
 const g=p.grad_norm==null?'<span class="none">None</span>':
  '<span class="bar" style="width:'+Math.max(2,120*p.grad_norm/top)+'px"></span>'+p.grad_norm.toPrecision(4);
 tr.innerHTML='<td>'+esc(p.name)+'</td><td>'+esc(JSON.stringify(p.shape))+'</td><td>'+g+'</td>';pb.appendChild(tr);}
const rows=L.nodes.map(n=>({index:n.index,name:n.name,out:n.output?JSON.stringify(n.output.shape)+' '+n.output.dtype:'',
 bytes:n.saved.reduce((a,s)=>a+(s.nbytes||0),0),
 saved:n.saved.map(s=>(s.freed?'<span class="freed">':'<span>')+esc(s.name+' '+JSON.stringify(s.shape)+' '+s.dtype+' '+fmt(s.nbytes))+(s.aliases.length?' ['+esc(s.aliases.join(', '))+']':'')+'</span>').join('<br>'),
 source:n.source||(n.param?'param '+n.param:'')}));
const nb=document.querySelector('#nodes tbody');
function draw(){nb.innerHTML='';for(const r of rows){const tr=document.createElement('tr');tr.id='row'+r.index;
 tr.innerHTML='<td>'+r.index+'</td><td>'+esc(r.name)+'</td><td>'+esc(r.out)+'</td><td>'+(r.bytes?fmt(r.bytes):'')+
 '</td><td>'+r.saved+'</td><td>'+esc(r.source)+'</td>';nb.appendChild(tr);}}
draw();let dir=1;
document.querySelectorAll('#nodes th').forEach(th=>th.onclick=()=>{const k=th.dataset.k;dir=-dir;
 rows.sort((a,b)=>(a[k]>b[k]?1:a[k]<b[k]?-1:0)*dir);draw();});
document.querySelectorAll('.node').forEach(g=>g.onclick=()=>{const i=+g.dataset.index;
 document.querySelectorAll('.hit').forEach(e=>e.classList.remove('hit'));g.classList.add('hit');
 const tr=document.getElementById('row'+i);if(tr){tr.classList.add('hit');tr.scrollIntoView({block:'nearest'});}
 document.getElementById('detail').textContent=JSON.stringify(L.nodes[i],null,1);});
document.body.dataset.ready='1';
})();
</script></body></html>
"""
