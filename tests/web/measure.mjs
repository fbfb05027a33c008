// Measures the dashboard on a large log: API latency of the log endpoints
// (tail, page before, window around a line deep in the file, a search) and of
// /api/run, the server's RSS, and its CPU while idle with the page open in
// headless chromium (utime+stime from /proc/PID/stat over 30 s).
//
// usage: node measure.mjs FAULTLINE_BINARY RUN_DIR SERVICE [IDLE_SECONDS]
// (make a run directory with a 1 GiB log with make_large_run.sh)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const [binary, runDir, service, idleArg] = process.argv.slice(2);
const idleSeconds = Number(idleArg || 30);
const ticks = 100;  // USER_HZ on Linux

function cpuTicks(pid) {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(f[11]) + Number(f[12]);
}
function rssKiB(pid) {
  return Number(fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)[1]);
}
async function timed(url) {
  const t0 = performance.now();
  const r = await fetch(url);
  const body = await r.text();
  return { ms: performance.now() - t0, status: r.status, bytes: body.length, json: r.headers.get('content-type').includes('json') ? JSON.parse(body) : null };
}
function median(xs) { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; }

const child = spawn(binary, ['dashboard', '--run-dir', runDir, '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise((resolve) => {
  let out = '';
  child.stdout.on('data', (d) => { out += d; const m = out.match(/at (http:\/\/\S+)/); if (m) resolve(m[1]); });
});
const base = url.replace(/\/$/, '');
const logSize = fs.statSync(path.join(runDir, `${service}.log`)).size;
console.log(`log ${service}.log: ${(logSize / 2 ** 30).toFixed(2)} GiB`);

async function bench(name, u, n = 10) {
  const runs = [];
  let last;
  for (let i = 0; i < n; i++) { last = await timed(u); runs.push(last.ms); }
  console.log(`${name.padEnd(44)} status ${last.status}  median ${median(runs).toFixed(1)} ms  max ${Math.max(...runs).toFixed(1)} ms  (${last.bytes} B)`);
  return last;
}

const first = await timed(`${base}/api/log?service=${service}&lines=400`);
console.log(`first tail right after start (index not built): ${first.ms.toFixed(1)} ms, status ${first.status}`);
// Wait for the line index to cover the whole log.
const t0 = performance.now();
let indexed = 0;
while (indexed < logSize) {
  const r = await timed(`${base}/api/log?service=${service}&lines=1`);
  indexed = r.json.indexed_bytes;
  if (performance.now() - t0 > 120000) break;
  await new Promise((res) => setTimeout(res, 200));
}
console.log(`line index covered ${(indexed / 2 ** 30).toFixed(2)} GiB after ${((performance.now() - t0) / 1000).toFixed(1)} s`);
await bench('GET /api/run', `${base}/api/run`);
const tail = await bench('GET /api/log tail 400 lines', `${base}/api/log?service=${service}&lines=400`);
console.log(`  last line number ${tail.json.lines.at(-1).n}`);
await bench('GET /api/log before=<middle> 400 lines', `${base}/api/log?service=${service}&lines=400&before=${Math.floor(logSize / 2)}`);
const mid = Math.floor(tail.json.lines.at(-1).n / 2);
await bench(`GET /api/log line=${mid} (240 around it)`, `${base}/api/log?service=${service}&line=${mid}&lines=240`);
await bench('GET /api/log level=error 200 lines', `${base}/api/log?service=${service}&level=error`);
await bench('GET /api/log q=<absent string> (64 MiB scan)', `${base}/api/log?service=${service}&q=zzzz-not-there`, 3);
await bench('GET /metrics', `${base}/metrics`);
console.log(`server RSS after these: ${(rssKiB(child.pid) / 1024).toFixed(1)} MiB`);

// A directory of logs without diagnosis.json gets its logs triaged once, in
// the background: wait for that before measuring idle.
const tt = performance.now();
for (;;) {
  const d = await timed(`${base}/api/diagnosis`);
  if (!d.json.pending && d.json.triage) { console.log(`background triage of the logs done after ${((performance.now() - tt) / 1000).toFixed(1)} s more (root cause line ${d.json.triage.root_cause && d.json.triage.root_cause.line})`); break; }
  if (performance.now() - tt > 600000) { console.log('background triage still running after 600 s'); break; }
  await new Promise((res) => setTimeout(res, 500));
}
const browser = await chromium.launchPersistentContext(fs.mkdtempSync(path.join(os.tmpdir(), 'fl-measure-')), {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
});
const page = browser.pages()[0] || await browser.newPage();
const tp = performance.now();
await page.goto(url);
await page.waitForSelector('#log .line');
console.log(`page load to log lines shown: ${(performance.now() - tp).toFixed(0)} ms`);
await new Promise((r) => setTimeout(r, 5000));  // let the first triage / index work finish
const c0 = cpuTicks(child.pid);
const w0 = performance.now();
await new Promise((r) => setTimeout(r, idleSeconds * 1000));
const c1 = cpuTicks(child.pid);
const wall = (performance.now() - w0) / 1000;
console.log(`idle with the page open: ${c1 - c0} ticks of CPU in ${wall.toFixed(1)} s = ${((c1 - c0) / ticks / wall * 100).toFixed(3)}% of a core`);
console.log(`server RSS at the end: ${(rssKiB(child.pid) / 1024).toFixed(1)} MiB`);
await browser.close();
child.kill('SIGTERM');
