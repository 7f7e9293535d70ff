// A release build's JavaScript crash, live, against devtools-mcp: the
// pinned Metro builds this fixture project for release (build.js), Node
// runs the bundle until it throws, and its frames, written as React
// Native writes them into a JavascriptException, reach devtools-mcp as
// logcat lines of a device stand-in (.ci/adb/device.js) through the real
// adb. debug_get_logs {level: "error"} must answer, in at most 4 KB, the
// thrown error with every frame in the project's source named as
// metro-symbolicate names it for the same map (file, line, function), and
// name the map it used (SOURCE_MAPS here; Go tests hold the places builds
// leave maps). The same run plays an ANR block and has-died lines, which
// Android writes under system_server's pid: they must be the app's entries
// (the ANR one error entry with its reason), another app's ANR must stay
// out, and the health check must say the app last ended in an ANR.
//
// usage: node check.js <devtools-mcp binary>   (ADB: the adb to use)
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { build } = require('./build.js');
const { startDevice, privateAdb } = require('../../adb/device.js');
const { startServer, freePort, until } = require('../../lib/mcp.js');

const APP = 'com.example.shop';
const STEP_MS = 20000;
const cleanups = [];
let failures = 0;

function check(ok, what, detail = '') {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}${ok || !detail ? '' : ': ' + detail}`);
  if (!ok) failures++;
  return ok;
}

// The scenario the stand-in plays: the app starts and logs, then crashes
// as a release build does, React Native's JavascriptException with the
// frames Node printed, Java's frames after them.
function writeScenario(dir, message, frames) {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, '01-running.logcat'), [
    '--------- beginning of system',
    `11-27 06:20:01.102   612   640 I ActivityManager: Start proc 4242:${APP}/u0a190 for next-top-activity {${APP}/${APP}.MainActivity}`,
    '--------- beginning of main',
    '11-27 06:20:02.010  4242  4277 I ReactNativeJS: Running "shop" with {"rootTag":11}',
    '',
  ].join('\n'));
  const at = '11-27 06:20:03.500  4242  4279 E AndroidRuntime: ';
  fs.writeFileSync(path.join(dir, '02-release-crash.logcat'), [
    `11-27 06:20:03.490  4242  4277 E ReactNativeJS: ${message}`,
    '--------- beginning of crash',
    at + 'FATAL EXCEPTION: mqt_v_native',
    at + `Process: ${APP}, PID: 4242`,
    at + `com.facebook.react.common.JavascriptException: ${message}, stack:`,
    ...frames.map((f) => at + f),
    at + '\tat com.facebook.react.modules.core.ExceptionsManagerModule.reportException(ExceptionsManagerModule.java:65)',
    at + '\tat java.lang.reflect.Method.invoke(Native Method)',
    '11-27 06:20:03.600   612   990 I ActivityManager: Process com.example.shop (pid 4242) has died: fg  TOP',
    '',
  ].join('\n'));
  // Relaunched, the app's JavaScript thread blocks: Android's own verdict,
  // written by system_server, then the death of the process it killed.
  const am = '11-27 06:20:20.300   612  1760 E ActivityManager: ';
  fs.writeFileSync(path.join(dir, '03-anr.logcat'), [
    '--------- beginning of system',
    `11-27 06:20:10.000   612   640 I ActivityManager: Start proc 4300:${APP}/u0a190 for next-top-activity {${APP}/${APP}.MainActivity}`,
    `${am}ANR in ${APP} (${APP}/.MainActivity)`,
    `${am}PID: 4300`,
    `${am}Reason: Input dispatching timed out (${APP}/${APP}.MainActivity is not responding. Waited 5001ms for MotionEvent)`,
    `${am}Load: 2.14 / 1.83 / 1.22`,
    '11-27 06:20:20.310   612  1760 E ActivityManager: ANR in com.other.app',
    '11-27 06:20:20.310   612  1760 E ActivityManager: PID: 7000',
    '11-27 06:20:20.310   612  1760 E ActivityManager: Reason: executing service com.other.app/.SyncService',
    `11-27 06:20:24.000   612   655 I ActivityManager: Killing 4300:${APP}/u0a190 (adj 0): user request after error`,
    `11-27 06:20:24.050   612   990 I ActivityManager: Process ${APP} (pid 4300) has died: fg  TOP`,
    '',
  ].join('\n'));
}

async function main() {
  const binary = process.argv[2];
  if (!binary) throw new Error('usage: node check.js <devtools-mcp binary>');
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'release-crash-'));
  cleanups.push(() => fs.rmSync(work, { recursive: true, force: true }));

  const built = await build(path.join(work, 'build'));
  const frames = fs.readFileSync(path.join(work, 'build', 'frames.txt'), 'utf8').trim().split('\n').slice(1);
  console.log(`built for release and ran until it threw: ${built.message}; ${frames.length} frames`);
  writeScenario(path.join(work, 'scenario'), built.message, frames);

  const adb = process.env.ADB || spawnSync('sh', ['-c', 'command -v adb'], { encoding: 'utf8' }).stdout.trim();
  if (!adb) throw new Error('adb is not on PATH (.ci/adb.sh installs it)');
  const device = await startDevice({ scenarioDir: path.join(work, 'scenario') });
  cleanups.push(() => device.stop());
  const serial = `127.0.0.1:${device.port}`;
  const adbPort = await freePort();
  const runAdb = privateAdb(adb, adbPort, work, STEP_MS);
  cleanups.push(() => runAdb('kill-server'));
  await runAdb('start-server');
  const connected = await runAdb('connect', serial);
  if (!check(/connected to/.test(connected.stdout), `adb connect ${serial}`, connected.stdout + connected.stderr)) return;

  await device.play('01-running');
  const server = startServer(binary, {
    ADB: adb, ANDROID_ADB_SERVER_PORT: String(adbPort), NATIVE_APPS: APP, METRO_URL: 'off',
    WS_PORT: String(await freePort()), REACTOTRON_PORT: '0', MCP_TRANSPORT: 'stdio',
    PROJECT_DIR: built.root, SOURCE_MAPS: path.join(work, 'build', 'index.android.bundle.map'),
  }, { answerMs: STEP_MS });
  cleanups.push(() => server.stop(1000));
  await server.initialize('release-crash-check');
  const session = await until('the app followed', STEP_MS, async () => {
    const health = await server.call('debug_health_check');
    return (health.sessions || []).find((s) => JSON.stringify(s).includes(APP));
  });
  await device.play('02-release-crash');
  const args = { session: session.id, level: 'error' };
  let answer = null;
  const entry = await until('the release crash read mapped', STEP_MS, async () => {
    answer = await server.request('tools/call', { name: 'debug_get_logs', arguments: args });
    const entries = (answer.result && answer.result.structuredContent && answer.result.structuredContent.entries) || [];
    return entries.find((e) => /JavascriptException/.test(e.message) && e.symbolicated);
  }).catch((err) => {
    check(false, err.message, JSON.stringify(answer).slice(0, 3000));
    return null;
  });
  if (!entry) return;
  const size = JSON.stringify(answer.result.content).length;
  check(size <= 4096, `debug_get_logs {level: "error"} answers in ${size} bytes (at most 4096)`);
  check(entry.message.includes(built.message), 'the entry reads as the thrown error', entry.message);
  // metro-symbolicate prints source:line:name; the entry names each frame
  // in the project `at name (file:line:column)`, framework frames hidden.
  let shown = 0;
  for (const f of built.frames) {
    const [source, line, name] = f.metroSymbolicate.split(':');
    if (source === 'null' || source.includes('/node_modules/')) continue;
    const want = `at ${name} (${path.relative(built.root, source)}:${line}:`;
    check(entry.message.includes(want), `${f.frame} mapped as metro-symbolicate maps it: ${want}…`, entry.message);
    shown++;
  }
  check(shown > 0 && entry.message.indexOf(`at ${built.frames[0].metroSymbolicate.split(':')[2]} (`) < entry.message.indexOf('\tat com.facebook'),
    'the top frame is the throw site in the project, before Java\'s frames', entry.message);
  check(/mapped with .*index\.android\.bundle\.map, built \d{4}-\d\d-\d\d \d\d:\d\d UTC/.test(entry.message), 'the entry names the map it used and when it was built', entry.message);

  // Android's own verdicts, written under system_server's pid, join the
  // app's session by the package and pid they name; another app's do not.
  await device.play('03-anr');
  const all = { session: session.id, limit: 50 };
  let entries = [];
  await until('the ANR and the death read', STEP_MS, async () => {
    const got = await server.call('debug_get_logs', all);
    entries = got.entries || [];
    return entries.some((e) => /has died/.test(e.message) && /4300/.test(e.message));
  }).catch((err) => check(false, err.message, JSON.stringify(entries).slice(0, 3000)));
  const anr = entries.find((e) => e.message.startsWith(`ANR in ${APP}`));
  check(anr && anr.level === 'error' && anr.ended === 'anr' && /\nReason: Input dispatching timed out/.test(anr.message),
    'the ANR is one error entry of the app, with its reason', JSON.stringify(anr));
  const died = entries.filter((e) => /has died/.test(e.message));
  check(died.length === 2, 'both deaths (after the crash, after the ANR) are the app\'s entries', JSON.stringify(died));
  check(!entries.some((e) => /com\.other\.app/.test(e.message)), 'another app\'s ANR stays out', JSON.stringify(entries.map((e) => e.message.slice(0, 80))));
  const health = await server.call('debug_health_check');
  const lastEnd = health.server && health.server.native && health.server.native.lastEnd;
  const ends = [].concat(lastEnd || []);
  check(ends.some((e) => e.app === APP && e.how === 'anr'), 'the health check says the app last ended in an ANR', JSON.stringify(lastEnd));
}

main()
  .catch((err) => check(false, err.stack || err.message))
  .finally(async () => {
    for (const c of cleanups.reverse()) {
      try {
        await c();
      } catch {}
    }
    console.log(failures ? `${failures} checks failed` : 'ok: the release crash maps as metro-symbolicate maps it');
    process.exit(failures ? 1 : 0);
  });
