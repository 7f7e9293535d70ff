'use strict';
// The check behind .ci/adb.sh: devtools-mcp's native side against the real
// adb (client and server) and a device stand-in that speaks adb's transport
// protocol over TCP (device.js), playing the scenario in
// testdata/native/adb/ (01-running … 08-after-flood: the logcat lines a
// device writes, in threadtime format; its README tells the story).
//
//   node check.js <devtools-mcp binary> [--legacy-shell] [--old-protocol]
//   node check.js --parts-only [--legacy-shell] [--old-protocol]   step 1 alone
//
// --legacy-shell: a device without shell_v2 (Android 6 and older);
// --old-protocol: a device speaking protocol version 0x01000000, 4 KiB
// messages with checksums checked (Android 8 and older).
//
// 1. The parts alone: a private adb server (its own port), `adb connect`,
//    `devices -l`, `shell pidof` (found: its pid; none: exit status 1 under
//    shell_v2), `logcat -d`: what devtools-mcp will ask is what adb really
//    sends, and the stand-in answers it.
// 2. devtools-mcp over stdio with ADB (the real adb), ANDROID_ADB_SERVER_PORT
//    (the private server), NATIVE_APPS=com.example.shop and METRO_URL=off:
//    - debug_health_check names the device and the app's pid, and once the
//      app logs, lists its session (the session id is read there);
//    - a debug_wait_for {stream: console, level: error} started before the
//      Java crash wakes on it;
//    - debug_get_logs {level: "error"} returns the Java crash as one entry
//      with its whole stack (every `at` line, `Caused by:`, `... 9 more`)
//      within 1 s of its last line, and after the relaunch the native crash
//      (libc's Fatal signal 11 and crash_dump's tombstone backtrace, written
//      under crash_dump's own pid) as one entry, within 1 s too;
//    - no line of another process is in the session (SystemUI, wpa_supplicant,
//      system_server but its verdicts about the app, tombstoned: errors
//      among them), and each ReactNativeJS
//      line is there once;
//    - when the device goes away and comes back (its connection drops, adb's
//      server connects again), devtools-mcp runs logcat again and the app's
//      next line arrives in the same session;
//    - likewise when the adb server is killed, stays down 5 s (the app
//      logging meanwhile: whether that line is caught up on is printed), and
//      a new one is started and the device connected to it again;
//    - the kill does not end the app's session: after it the session is
//      still connected, since the same time, and its latest seq has risen;
//    - the device turns unauthorized (its connection drops, and it asks
//      the new connection to wait for its user to accept the key): the
//      health check shows it as such, the session stays connected; once
//      the user accepts, logcat runs again and the app's next line arrives
//      in the same session;
//    - devtools-mcp runs with ANDROID_LOG_TAGS=*:S in its environment (a
//      developer's own terminal setting): the health check says it is set
//      and ignored, every logcat the device sees has the tags empty, and
//      all the rest holds as without it;
//    - through 20 000 lines of another process in one go, it keeps
//      answering and keeps none of them; after 20 000 console lines of the
//      app in one go (what it made of them is printed) it gets the app's
//      next line and stays under 100 MB;
//    - the device saw only the services allowed (`pidof` of the listed app,
//      `logcat` in threadtime with read-only options);
//    - when devtools-mcp's stdin closes it exits, every process it started
//      (read from /proc while it ran) is gone, and the device sees its
//      logcat streams closed.
//
// Prints one PASS or FAIL line per assertion and carries on where it can;
// exits 1 if any failed.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { startDevice, privateAdb } = require('./device.js');
const { startServer, freePort, sleep } = require('../lib/mcp.js');
const { descendants, procStat } = require('./procs.js');

const APP = 'com.example.shop';
const SCENARIO = path.join(__dirname, '..', '..', 'testdata', 'native', 'adb');
const CRASH_WITHIN_MS = 1000; // the issue's goal, from the crash's last line
const STEP_MS = 15000; // how long any other step may take before it fails
const POLL_MS = 50;
const FLOOD = 20000; // lines of another process in one go
const MAX_RSS_KB = 100 * 1024;
const SERVER_DOWN_MS = 5000; // how long the adb server stays killed
// The console stream's name: native lines are read as the app's logs.
const STREAM = 'console';
// What the device may be asked, after `shell[,args]:`: the app's pids, and
// logcat reading (threadtime) with options that change nothing on the
// device. Anything else (am, input, install, a logcat -c …) fails.
const ALLOWED = [
  new RegExp(`^pidof ${APP.replace(/\./g, '\\.')}$`),
  /^export ANDROID_LOG_TAGS="[^"]*"; exec logcat '-v' 'threadtime'( '(-b|-T|-t)' '[^']*'| '(-d|-D|--pid=\d+)')*$/,
];
// Lines of other processes in the scenario: none may reach the app's session.
// system_server's `Process com.example.shop (pid N) has died` is not here:
// Android's verdicts about the app are the app's entries (issue 34).
const FOREIGN = ['wpa_supplicant', 'CTRL-EVENT-SCAN', 'SystemUI', 'not the app', 'ActivityTaskManager', 'Displayed com.example.shop', 'Tombstone written to', 'received crash request', 'obtaining output fd',
  'Start proc', 'exited due to signal'];
const JS_LINES = ["TypeError: Cannot read property 'discount' of undefined", 'Running \\"shop\\" with {\\"rootTag\\":1,', 'relaunched after crash, cart restored', 'checkout pressed', 'payment sheet slow: 1200 ms', 'computing cart total'];
const JAVA_STACK = ['FATAL EXCEPTION: main', 'Process: com.example.shop, PID: 4242', 'java.lang.RuntimeException: Unable to start activity',
  'ActivityThread.performLaunchActivity(ActivityThread.java:3782)', 'ZygoteInit.main(ZygoteInit.java:936)',
  'Caused by: java.lang.IllegalStateException: PaymentModule used before init()', 'PaymentModule.requireReady(PaymentModule.kt:88)',
  'CheckoutActivity.onCreate(CheckoutActivity.kt:41)', '... 9 more'];
const NATIVE_STACK = ['Fatal signal 11 (SIGSEGV)', 'pid 4300 (com.example.shop)', '>>> com.example.shop <<<', 'Cause: null pointer dereference',
  'backtrace:', '#00 pc 00000000001a2b3c', 'shop::Cart::total() const+44', '#01 pc 00000000001a2f10', '#02 pc 00000000000c41a8', '#03 pc 00000000000f3e02',
  '#04 pc 00000000000cc5e0', '__start_thread+64'];

const cleanups = [];
const results = [];

function pass(msg) {
  results.push(true);
  console.log(`PASS: ${msg}`);
}
function fail(msg) {
  results.push(false);
  console.log(`FAIL: ${msg}`);
}
function check(ok, msg, why = '') {
  if (ok) pass(msg);
  else fail(why ? `${msg}: ${why}` : msg);
  return ok;
}
// stop ends the check at a failure nothing after it can get past.
function stop(msg) {
  fail(msg);
  throw Object.assign(new Error(msg), { reported: true });
}

async function until(ms, fn) {
  const deadline = Date.now() + ms;
  for (;;) {
    const got = await fn();
    if (got) return got;
    if (Date.now() > deadline) return null;
    await sleep(POLL_MS);
  }
}

function adbPath() {
  if (process.env.ADB) return process.env.ADB;
  const found = spawnSync('sh', ['-c', 'command -v adb'], { encoding: 'utf8' }).stdout.trim();
  if (!found) stop('adb is not on PATH (.ci/adb.sh installs Debian\'s adb package)');
  return found;
}

// entries answers debug_get_logs' entries, each with its JSON text.
async function logs(server, args) {
  const answer = await server.call('debug_get_logs', args);
  // contains is held here too, so a server that ignored it is not believed.
  const entries = (answer.entries || []).map((e) => ({ e, text: JSON.stringify(e) }));
  return { answer, entries: args.contains ? entries.filter((x) => x.text.includes(args.contains)) : entries };
}

function short(s, n = 1500) {
  s = typeof s === 'string' ? s : JSON.stringify(s);
  return s.length > n ? s.slice(0, n) + '…' : s;
}

// crashEntries polls debug_get_logs {level: error} until it holds an
// entry with every piece of want, and says how many entries hold the first.
async function crashEntries(server, session, want) {
  let last = null;
  const found = await until(CRASH_WITHIN_MS + STEP_MS, async () => {
    try {
      last = await logs(server, { session, level: 'error' });
    } catch (err) {
      last = { error: err.message, entries: [] };
      return null;
    }
    const full = last.entries.find((x) => want.every((w) => x.text.includes(JSON.stringify(w).slice(1, -1))));
    return full ? { full, at: Date.now() } : null;
  });
  const holding = (last?.entries || []).filter((x) => x.text.includes(want[0]));
  return { found, last, holding };
}

// partsAlone: the stand-in against the real adb, with nothing of ours.
async function partsAlone(ctx) {
  const { adb, adbPort, serial, device, opened, runAdb, legacyShell, server } = ctx;
  // --- 1. The parts alone.
  console.log('--- the device stand-in and the real adb');
  await device.play('01-running');
  const started = await runAdb('start-server');
  if (started.status !== 0) stop(`adb start-server on port ${adbPort}: ${started.stderr}`);
  const connected = await runAdb('connect', serial);
  if (!/connected to/.test(connected.stdout)) stop(`adb connect ${serial}: ${connected.stdout}${connected.stderr}`);
  pass(`private adb server on ${adbPort}; adb connect ${serial}: ${connected.stdout.trim()}`);
  const listed = await runAdb('devices', '-l');
  check(new RegExp(`^${serial.replace(/\./g, '\\.')}\\s+device product:sdk_gphone64_x86_64 model:sdk_gphone64_x86_64 device:emu64xa`, 'm').test(listed.stdout),
    'adb devices -l lists the stand-in as an online device with its product, model and device', short(listed.stdout));
  const pidof = await runAdb('-s', serial, 'shell', 'pidof', APP);
  check(pidof.status === 0 && pidof.stdout.trim() === '4242', `adb shell pidof ${APP} prints 4242, exit status 0`, `${pidof.status} ${short(pidof.stdout + pidof.stderr)}`);
  const none = await runAdb('-s', serial, 'shell', 'pidof', 'com.example.none');
  const noneStatus = legacyShell ? 0 : 1; // the legacy shell carries no status
  check(none.status === noneStatus && none.stdout === '', `adb shell pidof of an app not running prints nothing, exit status ${noneStatus}`, `${none.status} ${short(none.stdout + none.stderr)}`);
  const dump = await runAdb('-s', serial, 'logcat', '-v', 'threadtime', '-b', 'main,system,crash', '-d');
  check(dump.status === 0 && /^\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}  4242  4277 I ReactNativeJS: cart loaded 3 items$/m.test(dump.stdout),
    'adb logcat -v threadtime -d prints the device\'s lines in threadtime format', short(dump.stdout + dump.stderr));
  // Enough lines to take many messages (4 KiB each from an old device),
  // each sent only after the server's OKAY for the one before.
  const many = 3000;
  await device.flood(many);
  const big = await runAdb('-s', serial, 'logcat', '-v', 'threadtime', '-d', '-t', String(many));
  const got = big.stdout.split('\n').filter((l) => l.includes(' SystemUI: flood '));
  const inOrder = got.length === many && got.every((l, i) => l.includes(`flood ${i} of ${many}:`));
  check(big.status === 0 && inOrder, `adb logcat -d -t ${many} carries ${many} lines (${Math.round(big.stdout.length / 1024)} KiB) whole and in order`,
    `status ${big.status}, ${got.length} lines`);
  console.log(`services the real adb opened: ${opened.filter((e) => !e.event).map((e) => JSON.stringify(e.service)).join(', ')}`);
}

// follow starts devtools-mcp and finds the app's session.
async function follow(ctx) {
  const { adb, adbPort, serial, device, opened, binary } = ctx;
  // --- 2. devtools-mcp.
  console.log('--- devtools-mcp with the real adb');
  const mark = opened.length;
  const server = startServer(binary, {
    ADB: adb, ANDROID_ADB_SERVER_PORT: String(adbPort), NATIVE_APPS: APP, METRO_URL: 'off',
    WS_PORT: String(await freePort()), REACTOTRON_PORT: '0', MCP_TRANSPORT: 'stdio',
    ANDROID_LOG_TAGS: '*:S', // a developer's own terminal setting: ignored, and said so
  }, { answerMs: STEP_MS });
  cleanups.push(() => server.stop(1000));
  const seen = new Map(); // pid:start → process devtools-mcp started
  const sampler = setInterval(() => {
    for (const c of descendants(server.child.pid)) seen.set(`${c.pid}:${c.start}`, c);
  }, 50);
  cleanups.push(() => clearInterval(sampler));
  const t0 = Date.now();
  await server.initialize('adb-check').catch((err) => stop(err.message));

  // Followed: the health check names the device and the app's pid. Then
  // the app logs, and its session is there (made from the native side
  // alone, or before).
  let health = null;
  const healthNow = async () => {
    try {
      health = await server.call('debug_health_check');
    } catch (err) {
      health = { error: err.message };
    }
    return health;
  };
  const followed = await until(STEP_MS, async () => {
    const text = JSON.stringify(await healthNow());
    return text.includes(serial) && text.includes('4242');
  });
  if (!followed) {
    console.log(`last debug_health_check: ${short(health, 4000)}`);
    console.log(`devtools-mcp stderr:\n${server.stderr.slice(-40).join('\n')}`);
    stop(`debug_health_check does not name the device ${serial} with ${APP}'s pid 4242 within ${STEP_MS} ms`);
  }
  pass(`debug_health_check names the device ${serial} and ${APP}'s pid 4242, ${Date.now() - t0} ms after devtools-mcp started`);
  const logTags = health?.server?.native?.logTags || '';
  check(logTags.includes('ANDROID_LOG_TAGS=*:S'), 'debug_health_check says ANDROID_LOG_TAGS=*:S is set and ignored', short(health?.server?.native));
  await device.play('02-logging');
  const session = await until(STEP_MS, async () => ((await healthNow()).sessions || []).find((x) => JSON.stringify(x).includes(APP)));
  if (!session) {
    console.log(`last debug_health_check: ${short(health, 4000)}`);
    console.log(`devtools-mcp stderr:\n${server.stderr.slice(-40).join('\n')}`);
    stop(`devtools-mcp lists no session for ${APP} in debug_health_check within ${STEP_MS} ms of the app's logging`);
  }
  pass(`devtools-mcp lists ${APP} as session ${session.id} (via ${session.via}) once the app logs`);
  return { server, session, mark, seen, sampler };
}

// crashes: the JavaScript error, the Java crash, the relaunch, the native
// crash, and what the session holds after them.
async function crashes(ctx) {
  const { device, remember, lastLineAt, server, session } = ctx;
  // A wait started before the Java crash, from the stream's latest seq once
  // the app's JavaScript error (the last of its lines so far) is in, so
  // the wait can only wake on what comes next.
  let latest = 0;
  let lastJS = null;
  const jsError = await until(STEP_MS, async () => {
    try {
      lastJS = await logs(server, { session: session.id, contains: 'in CheckoutScreen' });
    } catch (err) {
      lastJS = { error: err.message, entries: [] };
      return false;
    }
    latest = lastJS.answer.latestSeq || 0;
    return lastJS.entries.length > 0;
  });
  if (check(jsError, 'the app\'s JavaScript error (console.error in logcat: one message on five lines) is in debug_get_logs', short(lastJS?.answer ?? lastJS))) {
    const whole = lastJS.entries.filter((x) => ["TypeError: Cannot read property 'discount' of undefined", 'This error is located at:', 'in CouponBadge (created by CheckoutScreen)'].every((w) => x.text.includes(w)));
    check(whole.length === 1, 'the JavaScript error\'s five lines are one entry', short(lastJS.entries.map((x) => x.text)));
  }
  const waitStarted = Date.now();
  const waiting = server.call('debug_wait_for', { session: session.id, stream: STREAM, level: 'error', since_seq: latest, timeout_ms: 20000 }, 25000)
    .then((r) => ({ r, at: Date.now() }), (err) => ({ err, at: Date.now() }));

  // The Java crash, polled for while it plays: its time is counted from
  // its last line, when that is logged.
  const javaPlaying = device.play('03-java-crash', remember);
  const j = await crashEntries(server, session.id, JAVA_STACK);
  await javaPlaying;
  const woke = await waiting;
  if (woke.err) fail(`debug_wait_for {stream: ${STREAM}, level: error} started before the Java crash: ${woke.err.message}`);
  else {
    const text = JSON.stringify(woke.r.events || []);
    check(woke.r.ended === 'matched' && text.includes('FATAL EXCEPTION'),
      `debug_wait_for {stream: ${STREAM}, level: error} started before the Java crash wakes on it (${woke.at - lastLineAt('... 9 more')} ms after the crash's last line, waited ${woke.at - waitStarted} ms)`,
      `ended ${woke.r.ended}, events ${short(text)}`);
  }
  if (!j.found) fail(`debug_get_logs {level: error} has no entry with the whole Java crash (${JAVA_STACK.join(' | ')}); last answer: ${short(j.last?.answer ?? j.last, 3000)}`);
  else {
    const ms = j.found.at - lastLineAt('... 9 more');
    console.log(`measured: the Java crash was one whole entry in debug_get_logs ${ms} ms after its last line (goal ${CRASH_WITHIN_MS} ms)`);
    check(ms <= CRASH_WITHIN_MS, `the Java crash is in debug_get_logs within ${CRASH_WITHIN_MS} ms of its last line`, `${ms} ms`);
    check(j.holding.length === 1, 'the Java crash is ONE error entry with its whole stack (every at line, Caused by:, ... 9 more)',
      `${j.holding.length} entries hold "FATAL EXCEPTION": ${short(j.holding.map((x) => x.text), 3000)}`);
  }

  // The relaunch: a new pid, found before the app crashes again.
  await device.play('04-relaunch');
  const relaunched = await until(STEP_MS, async () => {
    try {
      return JSON.stringify(await server.call('debug_health_check')).includes('4300');
    } catch {
      return false;
    }
  });
  check(relaunched, 'debug_health_check lists the relaunched app\'s new pid 4300');

  // The native crash: libc's line under the app's pid, the tombstone under
  // crash_dump's.
  const nativePlaying = device.play('05-native-crash', remember);
  const n = await crashEntries(server, session.id, NATIVE_STACK);
  await nativePlaying;
  if (!n.found) fail(`debug_get_logs {level: error} has no entry with the whole native crash (${NATIVE_STACK.join(' | ')}); last answer: ${short(n.last?.answer ?? n.last, 3000)}`);
  else {
    const ms = n.found.at - lastLineAt('#04 pc');
    console.log(`measured: the native crash was one whole entry in debug_get_logs ${ms} ms after its last line (goal ${CRASH_WITHIN_MS} ms)`);
    check(ms <= CRASH_WITHIN_MS, `the native crash is in debug_get_logs within ${CRASH_WITHIN_MS} ms of its last line`, `${ms} ms`);
    const frames = (n.last.entries || []).filter((x) => x.text.includes('#00 pc'));
    check(n.holding.length === 1 && frames.length === 1, 'the native crash is ONE error entry: Fatal signal 11 with the tombstone\'s backtrace (crash_dump\'s pid, >>> com.example.shop <<<)',
      `${n.holding.length} entries hold "Fatal signal", ${frames.length} hold "#00 pc": ${short(n.last.entries.map((x) => x.text), 3000)}`);
  }

  // Everything the session holds: no other process, each JS line once.
  let all = null;
  try {
    all = await logs(server, { session: session.id, limit: 500 });
  } catch (err) {
    fail(`debug_get_logs on session ${session.id}: ${err.message}`);
  }
  if (all) {
    const text = all.entries.map((x) => x.text).join('\n');
    const foreign = FOREIGN.filter((f) => text.includes(f));
    check(foreign.length === 0, 'no line of another process is in the app\'s session (SystemUI, wpa_supplicant, system_server, tombstoned, crash_dump\'s own lines)', `found ${foreign.join(', ')}: ${short(text, 3000)}`);
    const counts = JS_LINES.map((l) => [l, all.entries.filter((x) => x.text.includes(l)).length]);
    check(counts.every(([, c]) => c === 1), 'each ReactNativeJS line the app logged while followed is in the session once', counts.map(([l, c]) => `${c}× ${l}`).join('; '));
  }
}

// goingAway: the device, then the adb server, go away and come back.
async function goingAway(ctx) {
  const { adb, serial, device, opened, runAdb, remember, server, session, mark } = ctx;
  // The device goes away (its connection drops; adb's server connects
  // again, and the adb logcat that devtools-mcp ran ends with status 0):
  // devtools-mcp reads its log again, and the app's next line arrives in
  // the same session.
  const logcatOpens = () => opened.slice(mark).filter((e) => !e.event && e.service.includes('exec logcat')).length;
  const opensBefore = logcatOpens();
  const droppedAt = Date.now();
  device.drop();
  // Read again: a new logcat opened, and one open now (the scenario's next
  // lines go to the streams open when they are logged, as on a device).
  const reread = await until(20000, async () => logcatOpens() > opensBefore && device.openLogcats() > 0);
  if (check(reread, `devtools-mcp runs logcat again after the device went away and came back${reread ? ` (${Date.now() - droppedAt} ms after the drop)` : ''}`, 'no new logcat opened within 20 s')) {
    await device.play('06-back', remember);
    let lastBack = null;
    const back = await until(STEP_MS, async () => {
      try {
        lastBack = await logs(server, { session: session.id, contains: 'came back' });
      } catch (err) {
        lastBack = { error: err.message, entries: [] };
        return false;
      }
      return lastBack.entries.length > 0;
    });
    check(back, `the app's console line after the device came back arrives in session ${session.id}`, short(lastBack?.answer ?? lastBack));
  }

  // The adb server goes away (killed, as `adb kill-server` or an SDK
  // update does) and a new one comes; the device is connected to it again.
  // Whichever adb starts the new server (ours here, or devtools-mcp's next
  // `adb devices -l`, as adb starts one when none runs), devtools-mcp reads
  // the log again and the app's next line arrives in the same session.
  // The app runs again (06-back relaunched it after the native crash):
  // from here its session must never end.
  const before = await sessionState(server, session.id);
  const opensBeforeKill = logcatOpens();
  const killedAt = Date.now();
  const killed = await runAdb('kill-server');
  check(killed.status === 0, 'adb kill-server', `${killed.status} ${killed.stderr}`);
  await until(5000, async () => device.connections() === 0);
  // The device keeps logging while no adb server reads it: a follower that
  // reads on from where it stopped gets these lines; one that starts again
  // from the newest line (-T 1) does not. What happens is printed: the
  // issue sets no goal for it.
  await device.play('07-server-back', remember);
  // Down for a while, as an SDK update or a developer's kill-server leaves
  // it: longer than devtools-mcp's two-second polls, so it sees the gap.
  await sleep(SERVER_DOWN_MS);
  const restarted = await runAdb('start-server');
  console.log(`the new adb server was started by ${/daemon started successfully/.test(restarted.stderr) ? 'this check' : 'devtools-mcp\'s adb (adb start-server found it running)'}`);
  const again = await runAdb('connect', serial);
  check(/connected to/.test(again.stdout), `adb connect ${serial} to the new adb server`, again.stdout + again.stderr);
  const rereadAfterKill = await until(20000, async () => logcatOpens() > opensBeforeKill && device.openLogcats() > 0);
  if (check(rereadAfterKill, `devtools-mcp runs logcat again after the adb server was killed and started again${rereadAfterKill ? ` (${Date.now() - killedAt} ms after the kill)` : ''}`, 'no new logcat opened within 20 s')) {
    await device.flood(1, 4400);
    let lastServer = null;
    const serverBack = await until(STEP_MS, async () => {
      try {
        lastServer = await logs(server, { session: session.id, contains: 'render tick 0 of 1' });
      } catch (err) {
        lastServer = { error: err.message, entries: [] };
        return false;
      }
      return lastServer.entries.length > 0;
    });
    let gap = null;
    try {
      gap = await logs(server, { session: session.id, contains: 'adb server restarted' });
    } catch {}
    console.log(`observed: the app's line logged while no adb server ran is ${gap?.entries.length ? '' : 'NOT '}in the session after the restart`);
    check(serverBack, `the app's next console line after the adb server restarted arrives in session ${session.id}`, short(lastServer?.answer ?? lastServer));
  }
  await stillLive(server, session.id, before, 'the adb server\'s kill');
}

// sessionState is the session's entry in debug_health_check, with the
// latest seq of its console.
async function sessionState(server, id) {
  try {
    const h = await server.call('debug_health_check');
    const s = (h.sessions || []).find((x) => x.id === id) || null;
    const latest = (await server.call('debug_get_logs', { session: id, limit: 1 })).latestSeq || 0;
    return { s, latest, native: h.server?.native };
  } catch (err) {
    return { error: err.message };
  }
}

// stillLive checks that the session was never ended since before: still
// connected, connected since the same time, its latest seq risen.
async function stillLive(server, id, before, what) {
  const now = await sessionState(server, id);
  check(now.s?.connected === true && now.s?.connectedAt === before.s?.connectedAt && now.latest > before.latest,
    `session ${id} stays live through ${what} (connected since ${before.s?.connectedAt}, latest seq ${before.latest} → ${now.latest})`,
    `before ${short(before.s)}, now ${short(now.s ?? now)}`);
}

// unauthorized: the device turns unauthorized (its user has not accepted
// this computer's key, as after "revoke USB debugging authorizations"),
// then its user accepts.
async function unauthorized(ctx) {
  const { serial, device, opened, server, session, mark } = ctx;
  const logcatOpens = () => opened.slice(mark).filter((e) => !e.event && e.service.includes('exec logcat')).length;
  const before = await sessionState(server, session.id);
  device.setAuthorized(false);
  device.drop();
  let last = null;
  const shown = await until(20000, async () => {
    last = await sessionState(server, session.id);
    const d = (last.native?.devices || []).find((x) => x.id === serial);
    return d && d.state === 'unauthorized' ? d : null;
  });
  if (check(shown, `debug_health_check shows the device as adb lists it: unauthorized`, short(last?.native ?? last, 2000))) {
    console.log(`debug_health_check on the unauthorized device: ${short(shown, 600)}`);
  }
  // A few of devtools-mcp's polls while it stays so.
  await sleep(3000);
  const during = await sessionState(server, session.id);
  check(during.s?.connected === true && during.s?.connectedAt === before.s?.connectedAt,
    `session ${session.id} stays connected while its device is unauthorized`, short(during.s ?? during));
  const opensBefore = logcatOpens();
  device.setAuthorized(true);
  const reread = await until(20000, async () => logcatOpens() > opensBefore && device.openLogcats() > 0);
  if (check(reread, 'devtools-mcp runs logcat again once the device\'s user accepts the key', 'no new logcat opened within 20 s')) {
    await device.flood(3, 4400);
    let lastBack = null;
    const back = await until(STEP_MS, async () => {
      try {
        lastBack = await logs(server, { session: session.id, contains: 'render tick 2 of 3' });
      } catch (err) {
        lastBack = { error: err.message, entries: [] };
        return false;
      }
      return lastBack.entries.length > 0;
    });
    check(back, `the app's console line after the key was accepted arrives in session ${session.id}`, short(lastBack?.answer ?? lastBack));
  }
  await stillLive(server, session.id, before, 'the device unauthorized and accepted again');
}

// flood: a busy device's lines, then the app's own.
async function flood(ctx) {
  const { adb, device, remember, lastLineAt, server, session } = ctx;
  // A flood: lines of another process in one go, as a busy device writes
  // them, then the app's own, then one line of the app. devtools-mcp keeps
  // answering, keeps none of the other's, has the app's, and stays small.
  let slowest = 0;
  let floodDone = false;
  const flooding = device.flood(FLOOD).then((r) => {
    floodDone = true;
    return r;
  });
  while (!floodDone) {
    const t = Date.now();
    try {
      await server.call('debug_health_check', {}, 5000);
    } catch (err) {
      fail(`debug_health_check during the flood: ${err.message}`);
      break;
    }
    slowest = Math.max(slowest, Date.now() - t);
    await sleep(50);
  }
  const flood = await flooding;
  console.log(`measured: ${FLOOD} lines delivered through adb in ${flood.sentAt - flood.loggedAt} ms after the last was logged; slowest debug_health_check meanwhile ${slowest} ms`);
  // Then as many console lines of the app itself in one go. Lines of one
  // thread and tag logged in the same millisecond have one prefix, which is
  // also how logcat prints one message of several lines: a reader may take
  // them for one message. What devtools-mcp made of them is printed, not
  // held to anything (the issue sets no goal for it).
  const appFlood = await device.flood(FLOOD, 4400);
  let lastTick = null;
  const ticked = await until(3000, async () => {
    try {
      lastTick = await logs(server, { session: session.id, contains: `render tick ${FLOOD - 1} of ${FLOOD}` });
    } catch (err) {
      lastTick = { error: err.message, entries: [] };
      return null;
    }
    return lastTick.entries.length ? Date.now() : null;
  });
  let ticks = null;
  try {
    ticks = await server.call('debug_get_logs', { session: session.id, contains: 'render tick', limit: 1 });
  } catch {}
  console.log(`observed: after ${FLOOD} console lines of the app in one go, ${ticked ? `contains finds the last of them (${ticked - appFlood.loggedAt} ms after it was logged)` : 'contains does not find the last of them within 3 s'}; the newest entry holding "render tick": ${short(ticks?.entries?.[0] ?? ticks, 400)}`);
  await device.play('08-after-flood', remember);
  let lastFlood = null;
  const after = await until(STEP_MS, async () => {
    try {
      lastFlood = await logs(server, { session: session.id, contains: 'after the flood' });
    } catch (err) {
      lastFlood = { error: err.message, entries: [] };
      return null;
    }
    return lastFlood.entries.length ? Date.now() : null;
  });
  check(after, `after ${FLOOD} lines of another process, the app's next line arrives${after ? ` (${after - lastLineAt('after the flood')} ms after it was logged)` : ''}`, short(lastFlood?.answer ?? lastFlood));
  try {
    const flooded = await logs(server, { session: session.id, contains: 'NotificationStackScrollLayout' });
    check(flooded.entries.length === 0, 'none of the flood\'s lines is in the app\'s session', `${flooded.entries.length} are`);
  } catch (err) {
    fail(`debug_get_logs after the flood: ${err.message}`);
  }
  const peakKB = Number((/VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${server.child.pid}/status`, 'utf8')) || [])[1]);
  check(peakKB < MAX_RSS_KB, `devtools-mcp's peak resident size stays under ${MAX_RSS_KB / 1024} MB through the flood (${Math.round(peakKB / 1024)} MB)`);
  try {
    const h = JSON.stringify(await server.call('debug_health_check'));
    const drops = [...h.matchAll(/"[^"]*(drop|cut|truncat)[^"]*":[^,}\]]*/gi)].map((m) => m[0]);
    console.log(`debug_health_check on drops after the flood: ${drops.length ? drops.join(', ') : 'says nothing'}`);
  } catch {}
}

// closing: what the device was asked, and devtools-mcp's exit.
async function closing(ctx) {
  const { adb, device, opened, server, mark, seen, sampler } = ctx;
  // Only the listed commands.
  const mine = opened.slice(mark).filter((e) => !e.event);
  const bad = mine.filter((e) => {
    const cmd = e.service.replace(/^shell(,[^:]*)?:/, '');
    return e.refused || e.error || e.writes || !/^shell(,[^:]*)?:/.test(e.service) || !ALLOWED.some((re) => re.test(cmd));
  });
  const kinds = [...new Set(mine.map((e) => e.service.replace(/^shell(,[^:]*)?:/, '').replace(/ '-T' '[^']*'/, " '-T' …")))];
  console.log(`services devtools-mcp opened on the device (${mine.length}): ${kinds.map((k) => JSON.stringify(k)).join(', ')}`);
  check(mine.length > 0 && bad.length === 0, 'devtools-mcp opened only the listed services on the device (pidof of the app, logcat -v threadtime reading)',
    bad.length ? `not allowed: ${bad.map((e) => JSON.stringify(e)).join(', ')}` : 'none opened');
  const tagged = mine.filter((e) => e.service.includes('exec logcat') && !e.service.includes('export ANDROID_LOG_TAGS="\'\'"'));
  check(tagged.length === 0, 'every logcat devtools-mcp ran on the device had ANDROID_LOG_TAGS empty, though set in its environment',
    tagged.map((e) => JSON.stringify(e.service)).join(', '));

  // The server exits when its stdin closes; nothing it started outlives it.
  for (const c of descendants(server.child.pid)) seen.set(`${c.pid}:${c.start}`, c);
  const before = [...seen.values()];
  console.log(`processes devtools-mcp started while it ran: ${before.length} (${[...new Set(before.map((p) => p.cmdline.split(' ').slice(0, 6).join(' ')))].slice(0, 6).join(' | ')})`);
  check(before.some((p) => p.ppid === server.child.pid && / logcat /.test(p.cmdline)), 'devtools-mcp ran adb logcat as its own child (seen in /proc)', 'none seen');
  const stdinClosed = Date.now();
  server.child.stdin.end();
  const exited = await server.waitExit(5000);
  clearInterval(sampler);
  if (!exited) {
    fail('devtools-mcp did not exit within 5 s of its stdin closing');
    server.child.kill('SIGKILL');
  } else {
    check(exited.code === 0, `devtools-mcp exited ${exited.at - stdinClosed} ms after its stdin closed`, `status ${exited.code ?? exited.signal}`);
  }
  const alive = before.filter((p) => {
    const now = procStat(p.pid);
    return now && now.start === p.start && now.state !== 'Z';
  });
  // An adb server that devtools-mcp's adb started (adb starts one when none
  // runs) is adb's own, shared with every other adb user: it may stay.
  const daemon = (p) => / fork-server server/.test(p.cmdline);
  const left = alive.filter((p) => !daemon(p));
  check(left.length === 0, 'no process devtools-mcp started is left after it exits', left.map((p) => `${p.pid} ${p.cmdline}`).join('; '));
  for (const p of alive.filter(daemon)) console.log(`note: the adb server ${p.pid} (${p.cmdline}) was started by devtools-mcp's adb when none ran; it stays, as adb's servers do`);
  const closed = await until(2000, async () => device.openLogcats() === 0);
  check(closed, 'the device saw every logcat stream closed after devtools-mcp exited', `${device.openLogcats()} still open`);

  if (results.includes(false)) {
    console.log(`devtools-mcp stderr (last lines):\n${server.stderr.slice(-30).join('\n')}`);
  }
}

async function main() {
  const args = process.argv.slice(2);
  const legacyShell = args.includes('--legacy-shell');
  const oldProtocol = args.includes('--old-protocol');
  const partsOnly = args.includes('--parts-only');
  const binary = args.find((a) => !a.startsWith('--'));
  if (!binary && !partsOnly) stop('usage: node check.js <devtools-mcp binary> [--legacy-shell] [--old-protocol] | --parts-only [--legacy-shell] [--old-protocol]');
  const adb = adbPath();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'adb-check-'));
  cleanups.push(() => fs.rmSync(work, { recursive: true, force: true }));
  const version = spawnSync(adb, ['version'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).slice(0, 2).join(', ');
  console.log(`adb: ${adb} (${version})${legacyShell ? ', device without shell_v2' : ''}${oldProtocol ? ', device speaking protocol 0x01000000 (4 KiB messages, checksums checked)' : ''}`);

  const opened = [];
  const device = await startDevice({ scenarioDir: SCENARIO, legacyShell, oldProtocol, logFile: path.join(work, 'services.jsonl'), onOpen: (e) => opened.push(e) });
  cleanups.push(() => device.stop());
  const serial = `127.0.0.1:${device.port}`;
  const adbPort = await freePort();
  // The private server makes its key pair in the scratch folder.
  const runAdb = privateAdb(adb, adbPort, work, STEP_MS);
  cleanups.push(() => runAdb('kill-server'));

  const logged = new Map(); // line text → when the device logged it
  const remember = (text, at) => logged.set(text.replace(/^.{18}/, ''), at);
  const lastLineAt = (piece) => Math.max(...[...logged].filter(([t]) => t.includes(piece)).map(([, at]) => at));
  const ctx = { adb, adbPort, serial, device, opened, runAdb, legacyShell, binary, remember, lastLineAt };
  await partsAlone(ctx);
  if (partsOnly) return;
  Object.assign(ctx, await follow(ctx));
  await crashes(ctx);
  await goingAway(ctx);
  await unauthorized(ctx);
  await flood(ctx);
  await closing(ctx);
}

main()
  .catch((err) => {
    if (!err.reported) fail(err.stack || err.message);
  })
  .finally(async () => {
    for (const c of cleanups.reverse()) {
      try {
        await c();
      } catch {}
    }
    const failed = results.filter((r) => !r).length;
    console.log(failed ? `${failed} of ${results.length} assertions failed` : `ok: ${results.length} assertions passed`);
    process.exit(failed ? 1 : 0);
  });
