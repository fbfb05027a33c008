// Browser test of `faultline dashboard`: real runs of the seed pipeline's
// stand-ins (examples/seed-pipeline, replaying real vLLM logs) under
// `faultline run`, the dashboard serving them, and headless Debian chromium
// driven by playwright-core checking what a person would look at: the
// processes, the phases, the highlighted root-cause line linked from the
// diagnosis, a stall with its signals, and live updates without a reload.
//
// usage: node dashboard_test.mjs FAULTLINE_BINARY SOURCE_DIR OUT_DIR
// Screenshots: OUT_DIR/dashboard-failed.png, OUT_DIR/dashboard-stalled.png.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const [binary, sourceDir, outDir] = process.argv.slice(2).map((p) => path.resolve(p));
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'fl-dashboard-'));
fs.mkdirSync(outDir, { recursive: true });
const children = [];
let failures = 0;

function check(cond, what) {
  console.log(`${cond ? 'ok  ' : 'FAIL'} ${what}`);
  if (!cond) failures++;
}

function freePort() { return 20000 + Math.floor(Math.random() * 20000); }

// Runs the seed pipeline under `faultline run` into runsDir.
function startRun(runsDir, env) {
  fs.mkdirSync(runsDir, { recursive: true });
  const child = spawn(binary, ['run', '-f', 'examples/seed-pipeline/pipeline.yaml', '--runs-dir', runsDir, '--no-gpu',
    '--status-every', '1s', '--grace', '2s'], {
    cwd: sourceDir, env: { ...process.env, PORT: String(freePort()), ...env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  children.push(child);
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, out })));
}

// Starts `faultline dashboard` and resolves with its URL (printed on stdout).
function startDashboard(runDir) {
  const child = spawn(binary, ['dashboard', '--run-dir', runDir, '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/at (http:\/\/\S+)/);
      if (m) resolve({ child, url: m[1] });
    });
    child.on('exit', (code) => reject(new Error(`dashboard exited with ${code}: ${out}`)));
  });
}

function onlyRunDir(runsDir) {
  const dirs = fs.readdirSync(runsDir).filter((d) => fs.existsSync(path.join(runsDir, d, 'live.jsonl')));
  return path.join(runsDir, dirs.sort().pop());
}

async function main() {
  // A fresh profile (playwright passes it as --user-data-dir).
  const browser = await chromium.launchPersistentContext(path.join(work, 'profile'), {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1400, height: 1000 },
    // The page's CSP forbids eval, which playwright's waitForFunction polling uses.
    bypassCSP: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  const page = browser.pages()[0] || await browser.newPage();
  page.on('pageerror', (e) => { console.log(`page error: ${e.message}`); failures++; });
  page.setDefaultTimeout(30000);

  // ---- 1. a failed run: the seed's crash (TP=2 x DP=2 on two GPUs) ----------
  const failedRuns = path.join(work, 'failed');
  const crash = await startRun(failedRuns, { SEED_MODE: 'crash' });
  check(crash.code === 1, `faultline run (SEED_MODE=crash) exits 1 (got ${crash.code})`);
  const failedDir = onlyRunDir(failedRuns);
  check(fs.existsSync(path.join(failedDir, 'diagnosis.json')), 'the run directory has diagnosis.json');
  const dash1 = await startDashboard(failedDir);
  await page.goto(dash1.url);
  await page.evaluate(() => { window.__sameDocument = 'yes'; });
  await page.waitForSelector('#live.on');
  const row = page.locator('tr.service[data-service="vllm"]');
  await row.waitFor();
  check(/died|exited/.test(await row.locator('.badge').innerText()), 'vllm is shown as died/exited');
  check((await row.innerText()).includes('1'), 'its exit code is shown');
  await page.waitForSelector('#diagnosis .headline.bad');
  const diagText = await page.locator('#diagnosis').innerText();
  check(diagText.includes('AssertionError: DP adjusted local rank 3 is out of bounds.'), 'the diagnosis names the root cause');
  check(/fix/.test(diagText) && /CUDA_VISIBLE_DEVICES/.test(diagText), 'the diagnosis shows the fix');
  check(/cascade \(\d+\)/.test(diagText), 'the diagnosis shows the cascade');
  await page.waitForSelector('#timeline rect.phase');
  const lanes = await page.locator('#timeline g.lane').count();
  const phases = await page.locator('#timeline rect.phase').evaluateAll((rs) => [...new Set(rs.map((r) => r.dataset.phase))]);
  check(lanes >= 3, `the timeline has a lane per process (${lanes})`);
  check(phases.includes('process-start') && phases.includes('distributed-init'), `phases on the timeline: ${phases.join(', ')}`);
  check(await page.locator('#timeline .failure-marker').count() === 1, 'the failure is marked on the timeline');
  // The root-cause link of the diagnosis opens the log at that line, highlighted.
  await page.locator('#diagnosis dd a.line-link').first().click();
  const rcLine = page.locator('#log .line.root-cause.target');
  await rcLine.first().waitFor();
  check((await rcLine.first().innerText()).includes('AssertionError: DP adjusted local rank 3 is out of bounds.'),
    'the link opens the log at the root-cause line, highlighted');
  check(await page.locator('#log .line.root-cause').count() === 1, 'one line is highlighted as the root cause');
  check(await rcLine.evaluate((e) => { const r = e.getBoundingClientRect(); const b = e.parentElement.getBoundingClientRect();
    return r.top >= b.top && r.bottom <= b.bottom; }), 'the line is scrolled into view');
  check(await page.locator('#log .line.cascade').count() >= 1, 'cascade lines are marked');
  await page.screenshot({ path: path.join(outDir, 'dashboard-failed.png'), fullPage: true });
  // Level filter and search.
  await page.selectOption('#log-level', 'error');
  await page.waitForFunction(() => document.querySelectorAll('#log .line').length > 0 &&
    [...document.querySelectorAll('#log .line')].every((l) => l.classList.contains('error')));
  check(true, 'the level filter keeps only error lines');
  await page.selectOption('#log-level', 'all');
  await page.fill('#log-search', 'out of bounds');
  await page.press('#log-search', 'Enter');
  await page.waitForFunction(() => document.querySelectorAll('#log mark').length >= 2 &&
    [...document.querySelectorAll('#log .line')].every((l) => /out of bounds/i.test(l.innerText)));
  check(true, 'search shows only matching lines, marked');
  // Live: a line appended to the log shows up without a reload.
  await page.fill('#log-search', '');
  await page.click('#log-tail');
  await page.waitForFunction(() => !document.querySelector('#log mark'));
  fs.appendFileSync(path.join(failedDir, 'vllm.log'), 'INFO dashboard-live-check appended line\n');
  await page.waitForSelector('#log .line:has-text("dashboard-live-check")', { timeout: 15000 });
  check(await page.evaluate(() => window.__sameDocument) === 'yes', 'an appended log line appears live, without a reload');
  const metrics = await (await fetch(new URL('/metrics', dash1.url))).text();
  check(/faultline_service_state\{[^}]*service="vllm"[^}]*state="died"[^}]*\} 1/.test(metrics), '/metrics reports the state');
  dash1.child.kill('SIGTERM');

  // ---- 2. a stalled run, watched live from before it starts ---------------
  const stalledRuns = path.join(work, 'stalled');
  fs.mkdirSync(stalledRuns, { recursive: true });
  const dash2 = await startDashboard(stalledRuns);
  await page.goto(dash2.url);
  await page.evaluate(() => { window.__sameDocument = 'yes'; });
  await page.waitForSelector('#live.on');
  const stall = startRun(stalledRuns, { SEED_MODE: 'stall', STALL_AFTER: '5s' });
  await page.waitForSelector('tr.service[data-service="vllm"]', { timeout: 30000 });
  check(true, 'the new run appears on the open page');
  await page.waitForFunction(() => {
    const b = document.querySelector('tr.service[data-service="vllm"] .badge');
    return b && b.textContent === 'running';
  }, null, { timeout: 30000 }).then(() => check(true, 'vllm shown running while it runs'), () => check(false, 'vllm shown running'));
  const stallEnd = await stall;
  check(stallEnd.code === 1, `faultline run (SEED_MODE=stall) exits 1 (got ${stallEnd.code})`);
  await page.waitForFunction(() => {
    const b = document.querySelector('tr.service[data-service="vllm"] .badge');
    return b && b.textContent === 'stalled';
  }, null, { timeout: 30000 });
  check(true, 'vllm turns stalled on the page without a reload');
  await page.waitForSelector('#diagnosis .headline.stall');
  // The headline can render before the rest of the stall's record does (CI's
  // loaded cores once read the panel in between): wait for its signals.
  await page.waitForFunction(() => /signals/.test(document.querySelector('#diagnosis').innerText), null,
                             { timeout: 10000 }).catch(() => {});
  const stallText = await page.locator('#diagnosis').innerText();
  check(/signals/.test(stallText) && /busy_processes|any_read_rate|log_idle|cpu/i.test(stallText), 'the stall signals are listed');
  check(/stall/.test(stallText) && /distributed-init/.test(stallText), 'the stall names the last phase');
  await page.waitForSelector('#timeline .stall-marker');
  check(true, 'the stall is marked on the timeline');
  check(await page.locator('#cpu-chart svg path').count() >= 1, 'CPU samples are plotted');
  check(await page.evaluate(() => window.__sameDocument) === 'yes', 'the page was never reloaded');
  await page.screenshot({ path: path.join(outDir, 'dashboard-stalled.png'), fullPage: true });
  dash2.child.kill('SIGTERM');
  await browser.close();
}

const timer = setTimeout(() => { console.log('FAIL timeout'); cleanup(1); }, 240000);
function cleanup(code) {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
  clearTimeout(timer);
  spawnSync('rm', ['-rf', work]);
  process.exit(code);
}
main().then(() => {
  console.log(failures ? `${failures} check(s) failed` : 'all checks passed');
  cleanup(failures ? 1 : 0);
}, (e) => { console.log(`FAIL ${e.stack || e}`); cleanup(1); });
