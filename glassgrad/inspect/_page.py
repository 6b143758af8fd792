"""The self-contained HTML page of ``glassgrad inspect``: data as JSON, drawn by inline JS as SVG.

No network and no server: one file. Per step: the graph collapsed by module (click a module to
open it, its frame's label to close it), the memory timeline (stacked live bytes by kind, the
peaks with op and line), the saved-tensor ledger and the diff against the step before; then every
diagnostic that fired, with its line. ``document.body.dataset.ready`` is set once drawn.
"""

from __future__ import annotations

import html
import json
import os


def render(title: str, records: list, warnings: list, script: str) -> str:
    steps = [{k: v for k, v in r.items() if k != "timeline"} for r in records]
    base = os.path.dirname(os.path.abspath(script)) + os.sep
    payload = json.dumps({"script": script, "base": base, "steps": steps, "warnings": warnings},
                         default=str).replace("</", "<\\/")
    return _PAGE.replace("@TITLE@", html.escape(title)).replace("@DATA@", payload)


_PAGE = r"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>@TITLE@</title>
<style>
body{font-family:system-ui,sans-serif;margin:16px;color:#222;background:#fafafa}
h1{font-size:20px;margin:0 0 6px} h2{font-size:17px;margin:22px 0 6px;border-bottom:1px solid #ccc}
h3{font-size:14px;margin:14px 0 4px}
table{border-collapse:collapse;font:12px monospace;background:#fff}
td,th{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top} th{background:#eee}
.pic{overflow:auto;max-height:640px;border:1px solid #ccc;background:#fff;display:inline-block;max-width:100%}
svg text{font:11px monospace} .module{cursor:pointer} .frame-label{cursor:pointer;fill:#1565c0}
.code{color:#555} .num{text-align:right} button{font-size:12px;margin-right:6px}
.legend span{display:inline-block;margin-right:12px;font-size:12px}
.legend i{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:middle}
</style></head><body><h1>@TITLE@</h1><div id="summary"></div><div id="out"></div>
<script type="application/json" id="data">@DATA@</script><script>
(function(){
const D=JSON.parse(document.getElementById('data').textContent),o=document.getElementById('out');
const KINDS=['parameters','gradients','optimizer_state','saved_for_backward','activations','other'];
const COL={parameters:'#1e88e5',gradients:'#43a047',optimizer_state:'#8e24aa',
 saved_for_backward:'#fb8c00',activations:'#fdd835',other:'#9e9e9e'};
const NS='http://www.w3.org/2000/svg';
const esc=s=>String(s==null?'':s).replace(/[&<>"]/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]));
const fmt=b=>b==null?'?':b<1024?b+' B':b<1048576?(b/1024).toFixed(1)+' KiB':(b/1048576).toFixed(1)+' MiB';
const short=s=>s?String(s).split('/').pop():'';
const rel=s=>s&&String(s).startsWith(D.base)?String(s).slice(D.base.length):(s||'');  // lines in the script's folder
const el=(tag,attrs,parent)=>{const e=document.createElementNS(NS,tag);
 for(const k in attrs)e.setAttribute(k,attrs[k]);if(parent)parent.appendChild(e);return e;};
function table(head,rows,cls){return '<table class="'+cls+'"><tr>'+head.map(h=>'<th>'+esc(h)+'</th>').join('')+
 '</tr>'+rows.map(r=>'<tr>'+r.map(c=>'<td>'+c+'</td>').join('')+'</tr>').join('')+'</table>';}
function savedBytes(n){return n.saved.reduce((a,s)=>a+(s.freed?0:(s.counted?s.nbytes||0:0)),0);}

// ---- the graph, collapsed by module ----
function keyOf(n,open){const m=n.module;if(!m)return 'n'+n.index;const parts=m.split('.');let p='';
 for(let i=0;i<parts.length;i++){p=i?p+'.'+parts[i]:parts[i];if(!open.has(p))return 'm:'+p;}return 'n'+n.index;}
function drawGraph(s,box,open){
 box.innerHTML='';const items=new Map();
 for(const n of s.nodes){const k=keyOf(n,open);let it=items.get(k);
  if(!it){it={key:k,module:k.startsWith('m:')?k.slice(2):null,members:[],order:n.index};items.set(k,it);}
  it.members.push(n);}
 const edges=new Set();
 for(const n of s.nodes)for(const e of n.inputs){if(!e||e.node==null)continue;
  const a=keyOf(s.nodes[e.node],open),b=keyOf(n,open);if(a!==b)edges.add(a+'\u0000'+b);}
 // layers counted up from the loss: each item sits just above its earliest consumer, so a
 // parameter is drawn beside the op that reads it (edges against forward order are ignored)
 const list=[...items.values()].sort((a,b)=>a.order-b.order);const depth=new Map();const cons=new Map();
 for(const e of edges){const [a,b]=e.split('\u0000');if(!cons.has(a))cons.set(a,[]);cons.get(a).push(b);}
 for(const it of [...list].reverse()){let d=0;for(const b of cons.get(it.key)||[]){
  if(items.get(b).order>it.order)d=Math.max(d,depth.get(b)+1);}depth.set(it.key,d);}
 const deepest=Math.max(0,...depth.values()),rank=new Map(list.map(it=>[it.key,deepest-depth.get(it.key)]));
 for(const it of list){if(it.module){const info=s.modules[it.module]||{};const ops=it.members.filter(n=>n.kind!=='leaf').length;
   const last=it.module.split('.').pop();
   it.label='\u25b8 '+last+(info.type&&info.type!==last?' ('+info.type+')':'');
   it.sub=ops+' ops, saved '+fmt(it.members.reduce((a,n)=>a+savedBytes(n),0));}
  else{const n=it.members[0];it.label=n.kind==='leaf'?(n.param||n.name):n.name;
   it.sub=n.kind==='leaf'?'leaf':(n.code||short(n.source));}
  it.w=Math.max(it.label.length,Math.min(it.sub.length,40))*6.6+18;}
 const layers=[];for(const it of list){const r=rank.get(it.key);(layers[r]=layers[r]||[]).push(it);}
 const path=it=>it.module||it.members[0].module||'\uffff';  // a module's items side by side
 for(const l of layers)if(l)l.sort((a,b)=>path(a)<path(b)?-1:path(a)>path(b)?1:a.order-b.order);
 const spans=layers.map(l=>l.reduce((a,it)=>a+it.w,0)+16*(l.length-1));
 const W=Math.max(320,...spans)+40,H=layers.length*62+50;
 const svg=el('svg',{width:W,height:H,viewBox:'0 0 '+W+' '+H,class:'graph'},box);
 el('path',{d:'M0,0 L10,5 L0,10 z',fill:'#666'},el('marker',{id:'ah'+s.step,viewBox:'0 0 10 10',refX:9,refY:5,
  markerWidth:6,markerHeight:6,orient:'auto'},el('defs',{},svg)));
 const frames=[...open].filter(p=>list.some(it=>it.members.some(n=>(n.module||'')===p||(n.module||'').startsWith(p+'.'))));
 const top=30+26*Math.max(0,...frames.map(p=>p.split('.').length));  // room for the open frames' labels
 layers.forEach((l,r)=>{let x=(W-spans[r])/2;for(const it of l){it.x=x+it.w/2;it.y=top+r*62;x+=it.w+16;}});
 svg.setAttribute('height',H+top-30);svg.setAttribute('viewBox','0 0 '+W+' '+(H+top-30));
 frames.sort((a,b)=>a.split('.').length-b.split('.').length);
 for(const p of frames){const inside=list.filter(it=>it.members.some(n=>(n.module||'')===p||(n.module||'').startsWith(p+'.')));
  const depth=p.split('.').length;const pad=6+4*(4-Math.min(depth,4));
  const x0=Math.min(...inside.map(it=>it.x-it.w/2))-pad,x1=Math.max(...inside.map(it=>it.x+it.w/2))+pad;
  const y0=Math.min(...inside.map(it=>it.y))-15-pad-10,y1=Math.max(...inside.map(it=>it.y))+15+pad;
  el('rect',{x:x0,y:y0,width:x1-x0,height:y1-y0,rx:6,fill:'none',stroke:'#90a4ae','stroke-dasharray':'4,3',class:'frame','data-path':p},svg);
  const t=el('text',{x:x0+4,y:y0+10,class:'frame-label','data-path':p},svg);
  const ty=(s.modules[p]||{}).type;t.textContent='\u25be '+p+(ty&&ty!==p.split('.').pop()?' ('+ty+')':'');
  t.addEventListener('click',()=>{for(const q of [...open])if(q===p||q.startsWith(p+'.'))open.delete(q);drawGraph(s,box,open);});}
 for(const e of edges){const [a,b]=e.split('\u0000');const A=items.get(a),B=items.get(b);
  const y0=A.y+15,y1=B.y-15,m=(y0+y1)/2;
  el('path',{d:'M'+A.x+','+y0+' C'+A.x+','+m+' '+B.x+','+m+' '+B.x+','+y1,fill:'none',stroke:'#888',
   'marker-end':'url(#ah'+s.step+')'},svg);}
 for(const it of list){const g=el('g',{class:it.module?'module':'node','data-key':it.key},svg);
  if(it.module)g.setAttribute('data-path',it.module);else g.setAttribute('data-module',it.members[0].module||'');
  const n=it.members[0];const fill=it.module?'#e3f2fd':n.kind==='leaf'?'lightblue':'#e0e0e0';
  el('rect',{x:it.x-it.w/2,y:it.y-15,width:it.w,height:30,rx:3,fill:fill,stroke:it.module?'#1565c0':'#555'},g);
  const t1=el('text',{x:it.x,y:it.y-2,'text-anchor':'middle'},g);t1.textContent=it.label;
  const t2=el('text',{x:it.x,y:it.y+10,'text-anchor':'middle',fill:'#666','font-size':'9'},g);
  t2.textContent=it.sub.length>40?it.sub.slice(0,39)+'\u2026':it.sub;
  const tip=el('title',{},g);tip.textContent=it.module?it.members.map(m=>m.name).join(', '):
   (n.name+(n.output?' -> '+JSON.stringify(n.output.shape)+' '+n.output.dtype:'')+'\n'+(n.source||'')+'\n'+(n.code||''));
  if(it.module)g.addEventListener('click',()=>{open.add(it.module);drawGraph(s,box,open);});}
 box.dataset.open=[...open].join(',');
}

// ---- the memory timeline ----
function drawTimeline(m,box){
 const W=760,H=230,L=64,B=30,T=12,n=m.t.length;const tot=i=>KINDS.reduce((a,k)=>a+m.series[k][i],0);
 let most=1;for(let i=0;i<n;i++)most=Math.max(most,tot(i));
 const X=i=>L+(W-L-10)*(n>1?i/(n-1):0),Y=v=>H-B-(H-B-T)*v/most;
 const svg=el('svg',{width:W,height:H,class:'timeline'},box);const low=new Array(n).fill(0);
 for(const k of KINDS){if(!m.series[k].some(v=>v))continue;const up=low.map((v,i)=>v+m.series[k][i]);let d='';
  for(let i=0;i<n;i++){d+=(i?'L':'M')+X(i)+','+Y(up[i]);if(i+1<n)d+='L'+X(i+1)+','+Y(up[i]);}
  for(let i=n-1;i>=0;i--){if(i+1<n)d+='L'+X(i+1)+','+Y(low[i]);d+='L'+X(i)+','+Y(low[i]);}
  el('path',{d:d+'Z',fill:COL[k],stroke:'none',class:'kind-'+k},svg);for(let i=0;i<n;i++)low[i]=up[i];}
 el('line',{x1:L,y1:H-B,x2:W-10,y2:H-B,stroke:'#333'},svg);el('line',{x1:L,y1:T,x2:L,y2:H-B,stroke:'#333'},svg);
 for(const f of [0,0.5,1]){const t=el('text',{x:L-4,y:Y(most*f)+4,'text-anchor':'end'},svg);t.textContent=fmt(Math.round(most*f));}
 const xl=el('text',{x:(W+L)/2,y:H-6,'text-anchor':'middle'},svg);xl.textContent='allocation / free events ('+(n-1)+')';
 const p=m.peak,pi=m.t.indexOf(p.t);if(pi>=0){el('circle',{cx:X(pi),cy:Y(p.bytes),r:4,fill:'#c62828'},svg);
  const pt=el('text',{x:Math.min(X(pi)+6,W-260),y:Y(p.bytes)+14,fill:'#c62828'},svg);pt.textContent='peak '+fmt(p.bytes)+' '+(p.op||'');}
 box.insertAdjacentHTML('beforeend','<div class="legend">'+KINDS.map(k=>'<span><i style="background:'+COL[k]+'"></i>'+k.replace(/_/g,' ')+'</span>').join('')+'</div>');
}

function section(s){
 const sec=document.createElement('section');sec.className='step';sec.id='step-'+s.step;o.appendChild(sec);
 const t=s.totals;sec.innerHTML='<h2>step '+s.step+'</h2><p>'+t.nodes+' nodes ('+t.leaves+' leaves), '+
  t.saved_tensors+' saved tensors = '+fmt(t.saved_bytes)+' ('+fmt(t.saved_graph_only_bytes)+' beyond the parameters)</p>'+
  '<h3>graph, collapsed by module (click a module to open it)</h3>';
 const ctl=document.createElement('div');sec.appendChild(ctl);
 const box=document.createElement('div');box.className='pic graph-box';sec.appendChild(box);
 // a link may open modules: report.html#open=Net,Net.blocks
 const want=(location.hash.match(/open=([^&]*)/)||[])[1];
 const open=new Set(want?decodeURIComponent(want).split(',').filter(p=>p in s.modules):[]);
 const all=document.createElement('button');all.textContent='open all';ctl.appendChild(all);
 const none=document.createElement('button');none.textContent='close all';ctl.appendChild(none);
 all.onclick=()=>{for(const p in s.modules)open.add(p);drawGraph(s,box,open);};
 none.onclick=()=>{open.clear();drawGraph(s,box,open);};drawGraph(s,box,open);
 const m=s.memory;let h='';
 if(m){h+='<h3>memory timeline</h3>';sec.insertAdjacentHTML('beforeend',h);const tb=document.createElement('div');
  tb.className='pic';sec.appendChild(tb);drawTimeline(m,tb);
  h='<h3>at the peak: '+fmt(m.peak.bytes)+' ('+esc(m.peak.phase)+')</h3>'+table(['kind','bytes'],
   KINDS.map(k=>[esc(k),'<span class="num">'+fmt(m.peak.by_kind[k])+'</span>']),'memory-kinds');
  h+='<h3>peaks: the op and line of each</h3>'+table(['phase','live bytes','op','module','line','code'],
   [m.peak,...m.phase_peaks].map((q,i)=>[esc(i?q.phase:'peak ('+q.phase+')'),fmt(q.bytes),esc(q.op),esc(q.module||''),esc(rel(q.source)),'<span class="code">'+esc(q.code)+'</span>']),'memory-peaks');
  h+='<h3>alive at the peak, by the module that made it</h3>'+table(['module','bytes'],
   m.peak.by_module.map(([mo,b])=>[esc(mo||'(outside modules)'),fmt(b)]),'memory-modules');
  h+='<h3>largest buffers alive at the peak</h3>'+table(['bytes','kind','op','module','line','code'],
   m.peak.top.map(b=>[fmt(b.bytes),esc(b.kind),esc(b.op),esc(b.module||''),esc(rel(b.source)),'<span class="code">'+esc(b.code)+'</span>']),'memory-top');}
 const rows=s.nodes.filter(n=>n.saved.length).map(n=>[n.index,esc(n.name),esc(n.module||''),
  n.saved.map(x=>esc(x.name+' '+JSON.stringify(x.shape)+' '+(x.dtype||'')+' '+fmt(x.nbytes)+(x.freed?' (freed)':'')+(x.aliases&&x.aliases.length?' ['+x.aliases.join(', ')+']':''))).join('<br>'),
  fmt(savedBytes(n)),esc(short(n.source)),'<span class="code">'+esc(n.code)+'</span>']);
 h+='<h3>saved-tensor ledger</h3>'+table(['#','node','module','saved tensors','bytes','line','code'],rows,'ledger');
 const d=s.diff;h+='<h3>diff against step '+esc(d.previous==null?'-':d.previous)+'</h3><p class="diff-text">'+esc(d.text)+'</p>';
 if(d.link)h+='<p class="diff-link">linked through <b>'+esc(d.link.name)+'</b> made at '+esc(rel(d.link.source))+': <span class="code">'+esc(d.link.code)+'</span></p>';
 if(d.carried&&d.carried.length)h+='<h3>carried across steps</h3>'+table(['variable','linked by','at','code','reaches (last step)'],
  d.carried.map(c=>[esc(c.variable),esc(c.op),esc(rel(c.source)),'<span class="code">'+esc(c.code)+'</span>',esc(c.reaches+' '+short(c.reaches_source))]),'diff-carried');
 if(d.previous!=null)h+=table(['','op','module','line'],[...d.added_ops.map(a=>['added',...a.map(esc)]),
  ...d.removed_ops.map(a=>['removed',...a.map(esc)])],'diff-ops');
 sec.insertAdjacentHTML('beforeend',h);
}
document.getElementById('summary').textContent=D.script+': '+D.steps.length+' steps recorded, '+D.warnings.length+' diagnostics';
for(const s of D.steps)section(s);
let h='<h2>diagnostics ('+D.warnings.length+')</h2>';
h+=D.warnings.length?table(['step','category','message','line','code'],D.warnings.map(w=>[w.step,esc(w.category),
 esc(w.message),esc(rel(w.source)),'<span class="code">'+esc(w.code)+'</span>']),'diagnostics'):'<p>none fired</p>';
o.insertAdjacentHTML('beforeend',h);document.body.dataset.ready='1';
})();
</script></body></html>
"""
