// faultline dashboard: renders /api/run, /api/diagnosis, /api/triage,
// /api/samples and /api/log (docs/dashboard-api.md), kept live by the
// Server-Sent Events of /api/events. Plain DOM and hand-drawn SVG; no
// framework, nothing from a CDN. Logs are read in windows, never whole.
'use strict';

const params = new URLSearchParams(location.search);
const token = params.get('token');
const state = {
  run: null, selected: params.get('service'), diagVersion: -1, diag: null, triages: {},
  samplesKey: '', log: { service: null, lines: [], start: 0, resume: 0, reachedStart: false, mode: 'tail', target: 0 },
};

// ---- helpers -------------------------------------------------------------
const $ = (sel) => document.querySelector(sel);
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v; else if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v); else e.setAttribute(k, v);
  }
  for (const c of children) if (c != null) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}
const SVG = 'http://www.w3.org/2000/svg';
function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text != null) e.textContent = text;
  return e;
}
function url(path, q) {
  const u = new URLSearchParams(q || {});
  if (token) u.set('token', token);
  const s = u.toString();
  return s ? `${path}?${s}` : path;
}
async function api(path, q) {
  const r = await fetch(url(path, q), { cache: 'no-store' });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) { const e = new Error(body.error || r.statusText); e.status = r.status; throw e; }
  return body;
}
function bytes(n) {
  if (n == null) return '–';
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB']; let i = 0; let v = n;
  while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
  return `${v.toFixed(i && v < 10 ? 1 : 0)} ${u[i]}`;
}
function secs(s) {
  if (s == null) return '–';
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60); if (m < 60) return `${m}m ${Math.floor(s % 60)}s`;
  return `${Math.floor(m / 60)}h ${m % 60}m`;
}
function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }
const phaseColors = {
  'process-start': '#90a4ae', 'distributed-init': '#7e57c2', 'weight-loading': '#26a69a', 'torch-compile': '#ffa726',
  'kv-cache-profiling': '#42a5f5', 'cuda-graph-capture': '#ec407a', 'ready': '#66bb6a', 'training': '#8d6e63',
};
const palette = ['#1565c0', '#c62828', '#2e7d32', '#6a1b9a', '#ef6c00', '#00838f', '#5d4037', '#ad1457'];

// ---- run and services ----------------------------------------------------
function onRun(run) {
  state.run = run;
  $('#run-name').textContent = run.name;
  const badge = $('#run-state');
  const outcome = run.outcome && run.outcome.outcome;
  badge.textContent = outcome ? `${run.state}: ${outcome}` : run.state;
  badge.className = `badge ${outcome || run.state}`;
  $('#run-dir').textContent = run.run_dir;
  if (!state.selected || !run.services.some((s) => s.name === state.selected)) {
    const failed = run.outcome && run.outcome.service;
    state.selected = run.services.some((s) => s.name === failed) ? failed : (run.services[0] || {}).name;
  }
  renderServices(run);
  renderServiceSelect(run);
  if (run.diagnosis_version !== state.diagVersion) { state.diagVersion = run.diagnosis_version; loadDiagnosis(); }
  const sampleKey = run.services.map((s) => s.sampled).join();
  if (sampleKey !== state.samplesKey) { state.samplesKey = sampleKey; loadSamples(); }
  const svc = run.services.find((s) => s.name === state.log.service);
  if (svc && state.log.mode === 'tail' && $('#log-follow').checked && svc.log.bytes !== state.log.size) appendLog();
}

function renderServices(run) {
  const body = clear($('#services tbody'));
  for (const s of run.services) {
    const exit = s.exit_code != null ? String(s.exit_code) : s.signal != null ? `signal ${s.signal}` : '–';
    const row = el('tr', { class: `service${s.name === state.selected ? ' selected' : ''}`, 'data-service': s.name,
      onclick: () => selectService(s.name) },
      el('td', {}, el('b', { text: s.name })),
      el('td', {}, el('span', { class: `badge ${s.state}`, text: s.state })),
      el('td', { class: 'num', text: s.pid ?? '–' }),
      el('td', { text: s.phase || '–' }),
      el('td', { class: 'num', text: secs(s.uptime_s) }),
      el('td', { class: 'num', text: exit }),
      el('td', { class: 'num', text: s.cpu_percent == null ? '–' : `${s.cpu_percent.toFixed(0)}%` }),
      el('td', { class: 'num', text: bytes(s.rss_bytes) }),
      el('td', { class: 'num', text: bytes(s.log.bytes) }));
    body.append(row);
    for (const p of (s.processes || []).slice(0, 16)) {
      body.append(el('tr', { class: 'proc' }, el('td', { text: p.comm }), el('td', { text: `state ${p.state}` }),
        el('td', { class: 'num', text: p.pid }), el('td', { text: `${p.threads} threads` }), el('td', {}), el('td', {}),
        el('td', { class: 'num', text: `${p.cpu_percent.toFixed(0)}%` }), el('td', { class: 'num', text: bytes(p.rss_bytes) }),
        el('td', {})));
    }
  }
  if (!run.services.length) body.append(el('tr', {}, el('td', { colspan: 9, class: 'muted', text: 'no services yet' })));
}

function renderServiceSelect(run) {
  const sel = $('#log-service');
  const names = run.services.map((s) => s.name);
  if ([...sel.options].map((o) => o.value).join() !== names.join()) {
    clear(sel);
    for (const n of names) sel.append(el('option', { value: n, text: n }));
  }
  sel.value = state.selected || '';
  if (state.log.service !== state.selected && state.selected) loadTail();
}

function selectService(name) {
  state.selected = name;
  renderServices(state.run);
  $('#log-service').value = name;
  loadTail();
  renderTimeline();
}

// ---- diagnosis -----------------------------------------------------------
async function loadDiagnosis() {
  state.triages = {};
  try {
    state.diag = await api('/api/diagnosis');
  } catch (e) { $('#diagnosis-body').textContent = `diagnosis: ${e.message}`; return; }
  renderDiagnosis();
  renderTimeline();
  renderLog();
}

function rootCause() {
  const d = state.diag;
  if (!d || !d.triage || !d.triage.root_cause) return null;
  return { service: d.service, rc: d.triage.root_cause };
}

function lineLink(service, line, label) {
  return el('a', { class: 'line-link', href: `#${service}:${line}`, 'data-line': line,
    onclick: (ev) => { ev.preventDefault(); jumpToLine(service, line); } }, label || `${service}.log:${line}`);
}

function list(items, fn) {
  const ul = el('ul');
  for (const it of items) ul.append(el('li', {}, ...[].concat(fn(it))));
  return ul;
}

function renderDiagnosis() {
  const box = clear($('#diagnosis-body'));
  box.className = '';
  const d = state.diag;
  const rec = d && d.record;
  const t = d && d.triage;
  if (!d || (!rec && !t)) {
    box.append(el('div', { class: 'muted', text: d && d.pending ? 'triaging the logs…' : 'no failure diagnosed.' }));
    return;
  }
  const svc = d.service;
  const dl = el('dl');
  const add = (k, v) => { if (v != null && v !== '') dl.append(el('dt', { text: k }), el('dd', {}, v)); };
  if (rec) {
    const cls = rec.outcome === 'stalled' ? 'stall' : 'bad';
    box.append(el('div', { class: `headline ${cls}` },
      `${svc} ${rec.outcome}${rec.exit_code != null ? ` (exit code ${rec.exit_code})` : ''}${rec.signal != null ? ` (signal ${rec.signal})` : ''} after ${secs(rec.elapsed_s)}`,
      rec.detail ? el('span', { class: 'muted small', text: ` — ${rec.detail}` }) : null));
  } else if (t) {
    box.append(el('div', { class: `headline ${t.verdict === 'healthy' ? 'good' : t.verdict === 'stalled' ? 'stall' : 'bad'}`,
      text: `${svc}: ${t.verdict} (from its log; no diagnosis written yet)` }));
  }
  const rc = t && t.root_cause;
  if (rc) {
    add('root cause', el('span', {}, el('code', { class: 'root-cause-text', text: rc.message }), ' ',
      lineLink(svc, rc.line, `line ${rc.line}`), rc.process && rc.process.tag ? el('span', { class: 'muted', text: ` in ${rc.process.tag}` }) : null));
    add('explanation', rc.explanation);
    add('fix', rc.fix);
    if (rc.same_error_in && rc.same_error_in.length) add('also in', rc.same_error_in.join(', '));
    if (rc.context && rc.context.length) {
      add('evidence', list(rc.context.slice(0, 12), (c) => [lineLink(svc, c.line, `${c.line}`), ' ', el('code', { text: c.text })]));
    }
    if (t.cascade && t.cascade.length) {
      add(`cascade (${t.cascade_total})`, list(t.cascade.slice(0, 12), (c) => [lineLink(svc, c.line, `line ${c.line}`), ' ',
        el('code', { text: c.message }), el('span', { class: 'muted small', text: ` — ${c.reason}` })]));
    }
  }
  const stall = rec && rec.stall;
  if (stall) {
    add('stall', el('span', {}, el('b', { text: stall.title }), el('span', { class: 'muted', text: ` (${stall.class}, last phase ${stall.last_phase || '?'}, no progress for ${secs(stall.stalled_for_s)})` })));
    add('explanation', stall.explanation);
    add('signals', list(stall.matched, (m) => el('code', { text: m })));
    add('evidence', list(stall.evidence, (m) => m));
    add('try', list(stall.suggestions, (m) => m));
  }
  if (!rc && t) {
    if (t.last_line) add('last line', el('span', {}, lineLink(svc, t.last_line.line, `line ${t.last_line.line}`), ' ', el('code', { text: t.last_line.text })));
    if (t.stall_hints && t.stall_hints.length) add('hints', list(t.stall_hints, (h) => h));
  }
  if (t && t.phases_never_reached && t.phases_never_reached.length) add('never reached', t.phases_never_reached.join(' → '));
  box.append(dl);
}

// ---- timeline ------------------------------------------------------------
async function triageOf(service) {
  const d = state.diag;
  if (d && d.service === service && d.triage) return d.triage;
  const cached = state.triages[service];
  if (cached && !cached.pending) return cached.triage;
  try {
    const r = await api('/api/triage', { service });
    state.triages[service] = r;
    if (r.pending) setTimeout(() => { delete state.triages[service]; renderTimeline(); }, 1500);
    return r.triage;
  } catch (e) { return null; }
}

async function renderTimeline() {
  const service = state.selected;
  if (!service) return;
  $('#timeline-service').textContent = `${service}.log`;
  const t = await triageOf(service);
  const box = clear($('#timeline'));
  if (!t || t.error) { box.append(el('div', { class: 'muted', text: t ? t.error : 'triaging…' })); return; }
  const total = Math.max(t.total_lines || 1, 1);
  const lanes = new Map();
  const laneOf = (p) => { const k = (p && p.tag) || '(main)'; if (!lanes.has(k)) lanes.set(k, { marks: [], cascade: [] }); return lanes.get(k); };
  for (const ph of t.phases || []) laneOf(ph.process).marks.push(ph);
  const d = state.diag;
  const rc = d && d.service === service && t.root_cause ? t.root_cause : (t.root_cause || null);
  if (rc) laneOf(rc.process).rc = rc;
  for (const c of t.cascade || []) laneOf(c.process).cascade.push(c);
  const stall = d && d.service === service && d.record && d.record.stall ? d.record.stall : null;
  const stalled = stall || t.verdict === 'stalled';
  if (!lanes.size) { box.append(el('div', { class: 'muted', text: 'no phase markers in this log' })); return; }
  const W = 1000; const left = 170; const right = 20; const laneH = 24; const top = 22;
  const H = top + lanes.size * laneH + 26;
  const s = svg('svg', { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: 'none', height: H, role: 'img' });
  const x = (line) => left + ((line - 1) / Math.max(total - 1, 1)) * (W - left - right);
  s.append(svg('text', { x: left, y: 12 }, 'line 1'), svg('text', { x: W - right, y: 12, 'text-anchor': 'end' }, `line ${total}`));
  let i = 0;
  for (const [tag, lane] of lanes) {
    const y = top + i * laneH;
    const g = svg('g', { class: 'lane', 'data-process': tag });
    g.append(svg('text', { x: left - 6, y: y + 15, 'text-anchor': 'end', class: 'lane-label' }, tag.length > 26 ? `${tag.slice(0, 25)}…` : tag));
    g.append(svg('line', { x1: left, x2: W - right, y1: y + 11, y2: y + 11, stroke: '#e3e6ec' }));
    lane.marks.sort((a, b) => a.line - b.line);
    lane.marks.forEach((m, k) => {
      const end = k + 1 < lane.marks.length ? lane.marks[k + 1].line : (lane.rc ? lane.rc.line : total);
      const x0 = x(m.line); const x1 = Math.max(x(end), x0 + 3);
      const r = svg('rect', { x: x0, y: y + 3, width: x1 - x0, height: 16, rx: 2, fill: phaseColors[m.phase] || '#b0bec5', class: 'phase', 'data-phase': m.phase });
      r.append(svg('title', {}, `${m.phase} from line ${m.line}`));
      g.append(r);
      if (x1 - x0 > 70) g.append(svg('text', { x: x0 + 4, y: y + 15, fill: '#fff' }, m.phase));
    });
    for (const c of lane.cascade) {
      const mk = svg('rect', { x: x(c.line) - 1, y: y + 1, width: 2, height: 20, fill: '#e57373', class: 'marker cascade-marker' });
      mk.append(svg('title', {}, `cascade, line ${c.line}: ${c.message}`));
      mk.addEventListener('click', () => jumpToLine(service, c.line));
      g.append(mk);
    }
    if (lane.rc) {
      const cx = x(lane.rc.line);
      const mk = svg('path', { d: `M${cx} ${y} l8 11 l-8 11 l-8 -11 z`, fill: '#c62828', stroke: '#fff', class: 'marker failure-marker' });
      mk.append(svg('title', {}, `root cause, line ${lane.rc.line}: ${lane.rc.message}`));
      mk.addEventListener('click', () => jumpToLine(service, lane.rc.line));
      g.append(mk, svg('text', { x: Math.min(cx + 10, W - 120), y: y + 15, fill: '#c62828' }, `✖ failure, line ${lane.rc.line}`));
    }
    if (stalled && !lane.rc && lane.marks.length) {
      const last = lane.marks[lane.marks.length - 1];
      const phase = stall ? stall.last_phase : t.last_phase;
      if (!phase || last.phase === phase) {
        const mk = svg('rect', { x: W - right - 6, y: y + 1, width: 6, height: 20, fill: '#ef6c00', class: 'marker stall-marker' });
        mk.append(svg('title', {}, `stalled in ${last.phase}${stall ? ` for ${secs(stall.stalled_for_s)} (${stall.class})` : ''}`));
        g.append(mk);
      }
    }
    s.append(g);
    i++;
  }
  const ly = top + lanes.size * laneH + 16;
  let lx = left;
  for (const [name, color] of Object.entries(phaseColors)) {
    s.append(svg('rect', { x: lx, y: ly - 9, width: 10, height: 10, fill: color }), svg('text', { x: lx + 13, y: ly }, name));
    lx += 20 + name.length * 6;
  }
  if (stalled) {
    s.append(svg('text', { x: (left + W - right) / 2, y: 12, 'text-anchor': 'middle', fill: '#ef6c00' },
      `▮ stalled${stall ? ` (${stall.class}) for ${secs(stall.stalled_for_s)}` : ''}`));
  }
  box.append(s);
}

// ---- charts --------------------------------------------------------------
function lineChart(box, series, fmt, title) {
  const W = 600; const H = 170; const l = 56; const r = 10; const tp = 14; const b = 22;
  const pts = series.flatMap((s) => s.points);
  const wrap = el('div');
  if (!pts.length) { box.append(el('div', { class: 'muted small', text: `${title}: no samples` })); return; }
  const t0 = Math.min(...pts.map((p) => p[0])); const t1 = Math.max(...pts.map((p) => p[0]), t0 + 1000);
  const ymax = Math.max(...pts.map((p) => p[1]), series.ymax || 0, 1e-9);
  const s = svg('svg', { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: 'none' });
  const X = (t) => l + ((t - t0) / (t1 - t0)) * (W - l - r);
  const Y = (v) => H - b - (v / ymax) * (H - b - tp);
  s.append(svg('line', { x1: l, x2: W - r, y1: H - b, y2: H - b, class: 'axis' }), svg('line', { x1: l, x2: l, y1: tp, y2: H - b, class: 'axis' }));
  s.append(svg('text', { x: l - 4, y: tp + 4, 'text-anchor': 'end' }, fmt(ymax)), svg('text', { x: l - 4, y: H - b, 'text-anchor': 'end' }, fmt(0)));
  s.append(svg('text', { x: l, y: H - 6 }, new Date(t0).toISOString().slice(11, 19)), svg('text', { x: W - r, y: H - 6, 'text-anchor': 'end' }, new Date(t1).toISOString().slice(11, 19)));
  s.append(svg('text', { x: l + 4, y: tp - 2 }, title));
  for (const se of series) {
    if (!se.points.length) continue;
    const d = se.points.map((p, k) => `${k ? 'L' : 'M'}${X(p[0]).toFixed(1)} ${Y(p[1]).toFixed(1)}`).join(' ');
    s.append(svg('path', { d, fill: 'none', stroke: se.color, 'stroke-width': 1.8, 'stroke-dasharray': se.dash || '' }));
    if (se.points.length === 1) s.append(svg('circle', { cx: X(se.points[0][0]), cy: Y(se.points[0][1]), r: 3, fill: se.color }));
  }
  wrap.append(s);
  const legend = el('div', { class: 'legend' });
  for (const se of series) {
    const sw = el('i'); sw.style.background = se.color;
    legend.append(el('span', {}, sw, se.name));
  }
  wrap.append(legend);
  box.append(wrap);
}

async function loadSamples() {
  let data;
  try { data = await api('/api/samples'); } catch (e) { return; }
  const gbox = clear($('#gpu-chart'));
  const gpu = state.run && state.run.gpu;
  if (!data.gpu.length) {
    gbox.append(el('div', { class: 'muted', text: gpu && gpu.note ? `no GPU data: ${gpu.note}` : 'no GPU samples in this run' }));
  } else {
    const byDev = new Map();
    for (const smp of data.gpu) for (const d of smp.devices) {
      if (!byDev.has(d.index)) byDev.set(d.index, { mem: [], util: [], total: d.memory_total_bytes });
      const e = byDev.get(d.index);
      if (d.memory_used_bytes != null) e.mem.push([smp.t, d.memory_used_bytes]);
      if (d.utilization_percent != null) e.util.push([smp.t, d.utilization_percent]);
    }
    const mem = []; const util = [];
    let maxTotal = 0;
    [...byDev.entries()].forEach(([idx, e], k) => {
      mem.push({ name: `GPU ${idx}`, color: palette[k % palette.length], points: e.mem });
      util.push({ name: `GPU ${idx}`, color: palette[k % palette.length], points: e.util });
      maxTotal = Math.max(maxTotal, e.total || 0);
    });
    mem.ymax = maxTotal;
    util.ymax = 100;
    lineChart(gbox, mem, bytes, 'memory used');
    lineChart(gbox, util, (v) => `${v.toFixed(0)}%`, 'utilisation');
  }
  const procs = clear($('#gpu-procs'));
  if (data.gpu_processes.length) {
    procs.textContent = 'held now: ' + data.gpu_processes.map((p) => `pid ${p.pid} on GPU ${p.gpu}: ${bytes(p.memory_used_bytes)}`).join('; ');
  }
  const cbox = clear($('#cpu-chart'));
  const names = Object.keys(data.services);
  lineChart(cbox, names.map((n, k) => ({ name: n, color: palette[k % palette.length], points: data.services[n].map((p) => [p.t, p.cpu_percent]) })),
    (v) => `${v.toFixed(0)}%`, 'CPU (% of a core)');
  lineChart(cbox, names.map((n, k) => ({ name: n, color: palette[k % palette.length], points: data.services[n].map((p) => [p.t, p.rss_bytes]) })),
    bytes, 'RSS');
}

// ---- log -----------------------------------------------------------------
function logFilters() {
  return { level: $('#log-level').value, q: $('#log-search').value.trim() };
}

function cascadeLines(service) {
  const d = state.diag;
  const set = new Set();
  if (d && d.service === service && d.triage) for (const c of d.triage.cascade || []) set.add(c.line);
  return set;
}

function renderLog() {
  const box = $('#log');
  const L = state.log;
  const stick = box.scrollTop + box.clientHeight >= box.scrollHeight - 4;
  clear(box);
  const rcInfo = rootCause();
  const rcLine = rcInfo && rcInfo.service === L.service ? rcInfo.rc.line : -1;
  const rcText = rcInfo && rcInfo.service === L.service ? (rcInfo.rc.text || '').trim() : null;
  const cascade = cascadeLines(L.service);
  const q = L.q ? L.q.toLowerCase() : '';
  const frag = document.createDocumentFragment();
  let prev = null;
  for (const ln of L.lines) {
    if (prev && prev.n != null && ln.n != null && ln.n > prev.n + 1) frag.append(el('div', { class: 'gap', text: `… ${ln.n - prev.n - 1} lines …` }));
    const isRc = ln.n != null ? ln.n === rcLine : (rcText && ln.text.trim() === rcText);
    let cls = `line ${ln.level}`;
    if (isRc) cls += ' root-cause';
    if (ln.n != null && cascade.has(ln.n)) cls += ' cascade';
    if (L.target && ln.n === L.target) cls += ' target';
    const t = el('span', { class: 't' });
    if (q) {
      const low = ln.text.toLowerCase(); let pos = 0; let k;
      while ((k = low.indexOf(q, pos)) >= 0) { t.append(ln.text.slice(pos, k), el('mark', { text: ln.text.slice(k, k + q.length) })); pos = k + q.length; }
      t.append(ln.text.slice(pos));
    } else t.textContent = ln.text;
    frag.append(el('div', { class: cls, 'data-n': ln.n ?? '', 'data-offset': ln.offset }, el('span', { class: 'n', text: ln.n ?? '' }), t));
    prev = ln;
  }
  box.append(frag);
  $('#log-earlier').hidden = L.reachedStart;
  const filt = L.q || L.level !== 'all' ? ` matching${L.q ? ` “${L.q}”` : ''}${L.level !== 'all' ? ` at ${L.level}+` : ''}` : '';
  $('#log-info').textContent = `${L.lines.length} lines${filt} · ${bytes(L.size)} log${L.mode === 'window' ? ` · around line ${L.target}` : ''}`;
  if (L.mode === 'window' && L.target) {
    const target = box.querySelector('.line.target');
    if (target) target.scrollIntoView({ block: 'center' });
  } else if (stick || L.scrollBottom) { box.scrollTop = box.scrollHeight; L.scrollBottom = false; }
}

async function loadTail() {
  const service = state.selected;
  if (!service) return;
  const f = logFilters();
  const seq = (state.log.seq || 0) + 1;
  state.log.seq = seq;
  try {
    const r = await api('/api/log', { service, lines: 400, level: f.level, q: f.q });
    if (state.log.seq !== seq) return;
    Object.assign(state.log, { service, lines: r.lines, start: r.start, resume: r.resume, reachedStart: r.reached_start,
      size: r.size, mode: 'tail', target: 0, level: f.level, q: f.q, scrollBottom: true });
    renderLog();
  } catch (e) {
    Object.assign(state.log, { service, lines: [], reachedStart: true, mode: 'tail' });
    clear($('#log')).append(el('div', { class: 'muted', text: e.message }));
  }
}

async function appendLog() {
  const L = state.log;
  if (L.busy) return;
  L.busy = true;
  try {
    const r = await api('/api/log', { service: L.service, after: L.resume, lines: 2000, level: L.level, q: L.q });
    if (L.mode !== 'tail' || r.service !== L.service) return;
    if (r.size < L.resume) { loadTail(); return; }  // truncated or rotated
    L.lines = L.lines.filter((x) => x.offset < L.resume).concat(r.lines);
    if (L.lines.length > 5000) { L.lines = L.lines.slice(-5000); L.start = L.lines[0].offset; L.reachedStart = false; }
    L.resume = r.end; L.size = r.size;
    renderLog();
  } catch (e) { /* the next update retries */ } finally { L.busy = false; }
}

async function loadEarlier() {
  const L = state.log;
  try {
    const r = await api('/api/log', { service: L.service, before: L.start, lines: 400, level: L.level || 'all', q: L.q || '' });
    const box = $('#log'); const h = box.scrollHeight;
    L.lines = r.lines.concat(L.lines); L.start = r.start; L.reachedStart = r.reached_start;
    const keepTarget = L.mode === 'window'; L.mode = keepTarget ? 'window-paged' : L.mode;
    renderLog();
    box.scrollTop = box.scrollHeight - h;
  } catch (e) { $('#log-info').textContent = e.message; }
}

async function jumpToLine(service, line, attempt = 0) {
  if (state.selected !== service) { state.selected = service; renderServices(state.run); $('#log-service').value = service; renderTimeline(); }
  $('#log-search').value = ''; $('#log-level').value = 'all';
  try {
    const r = await api('/api/log', { service, line, lines: 240 });
    Object.assign(state.log, { service, lines: r.lines, start: r.start, resume: r.end, reachedStart: r.reached_start,
      size: r.size, mode: 'window', target: line, level: 'all', q: '' });
    renderLog();
    $('#log-panel').scrollIntoView({ block: 'start' });
  } catch (e) {
    if (e.status === 409 && attempt < 20) { $('#log-info').textContent = `indexing the log… (${e.message})`; setTimeout(() => jumpToLine(service, line, attempt + 1), 1000); } else $('#log-info').textContent = e.message;
  }
}

// ---- wiring --------------------------------------------------------------
function connect() {
  const es = new EventSource(url('/api/events'));
  es.addEventListener('update', (ev) => { $('#live').textContent = '● live'; $('#live').className = 'live on'; onRun(JSON.parse(ev.data)); });
  es.addEventListener('open', () => { $('#live').textContent = '● live'; $('#live').className = 'live on'; });
  es.addEventListener('error', () => { $('#live').textContent = '○ reconnecting'; $('#live').className = 'live'; });
}

document.addEventListener('DOMContentLoaded', () => {
  $('#log-service').addEventListener('change', (e) => selectService(e.target.value));
  $('#log-level').addEventListener('change', loadTail);
  $('#log-search').addEventListener('keydown', (e) => { if (e.key === 'Enter') loadTail(); });
  $('#log-search').addEventListener('search', loadTail);
  $('#log-tail').addEventListener('click', () => { $('#log-follow').checked = true; loadTail(); });
  $('#log-earlier').addEventListener('click', loadEarlier);
  $('#log-root').addEventListener('click', () => { const r = rootCause(); if (r) jumpToLine(r.service, r.rc.line); });
  api('/api/run').then(onRun).catch((e) => { $('#diagnosis-body').textContent = e.message; });
  connect();
});
