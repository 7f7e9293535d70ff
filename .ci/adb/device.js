'use strict';
// An Android device as the real adb server sees one over TCP
// (`adb connect 127.0.0.1:PORT`): it speaks adb's transport protocol and
// serves the two services devtools-mcp may open, the app's pid lookup and
// a streaming logcat, from a scenario of logcat lines played on command.
// No dependencies: Node's net module only.
//
// The transport (adb.h, protocol.txt and docs/dev/internals.md of the adb
// module): every message is a 24-byte little-endian header (command, arg0,
// arg1, data length, data checksum, magic = command ^ 0xffffffff) and its
// data. The host speaks first: CNXN(version, max payload, "host::features=…").
// We answer CNXN(A_VERSION 0x01000001, max payload, banner) with no AUTH,
// which adb accepts as an authorised device. The checksum is the byte sum
// of the data; from version 0x01000001 on neither side checks it, but it is
// always written right, and checked on what the host sends when the host
// speaks an older version. Streams: the host sends OPEN(its id, 0,
// "service\0"); we answer OKAY(our id, its id) or, refusing, CLSE(0, its
// id). Data goes in WRTE(sender id, receiver id, bytes); each WRTE is
// answered by OKAY before the sender may send the next one. CLSE(sender,
// receiver) ends a stream.
//
// Seen with Debian's adb 29.0.6 (client and server) against this stand-in,
// with the banner's `features=shell_v2,cmd` (every device since Android 7
// lists shell_v2; --legacy-shell leaves it out):
//   adb connect / devices -l     nothing reaches the device but the CNXN:
//                                the server answers from the banner
//                                (`127.0.0.1:PORT device product:… model:…
//                                device:… transport_id:1`)
//   adb -s S shell pidof P       OPEN "shell,v2,raw:pidof P" (with TERM set
//                                in the client's environment,
//                                "shell,v2,TERM=xterm,raw:pidof P")
//                                legacy: "shell:pidof P"
//   adb -s S logcat -v threadtime -b main,system,crash -T 1
//       OPEN "shell,v2:export ANDROID_LOG_TAGS=\"''\"; exec logcat '-v'
//             'threadtime' '-b' 'main,system,crash' '-T' '1'"
//       (TERM=… likewise after v2; legacy: the same after "shell:"); the
//       stream stays open until the client ends, when the server sends CLSE.
// Each service string ends in a NUL. A device that answers CNXN with
// version 0x01000000 (--old-protocol) gets 4 KiB messages whose checksums
// the server checks: with a wrong one, adb 29.0.6 drops the device
// (`adb connect` then says "failed to connect to …: Connection refused").
// Under shell_v2 every stream carries shell-protocol packets (one id byte:
// 0 stdin, 1 stdout, 2 stderr, 3 exit, 4 close stdin; a 4-byte
// little-endian length; the bytes): the exit status travels in packet 3, so
// `pidof` with no process exits 1 as on a device. The legacy shell has no
// status: the stream just closes, and adb exits 0 with nothing printed.
//
// Logcat is served as a device's logd would: lines are restamped with the
// wall clock when played (the scenario keeps its spacing; the device's
// clock is UTC), `-d` dumps and ends, `-t N` prints the last N and ends,
// `-T N` or `-T 'MM-DD HH:MM:SS.mmm'` prints from there and keeps streaming,
// nothing of these prints everything and keeps streaming; `-b` chooses
// buffers (default main,system,crash), `--pid=N` filters, `-D` prints a
// divider on every buffer switch, and only the threadtime format is served.
// Each buffer's lines are known from the scenario's `--------- beginning
// of X` / `switch to X` dividers.
//
// The process table follows the scenario: `ActivityManager: Start proc
// N:package/…` starts a process, `Process package (pid N) has died` ends it.
//
// A device that has not accepted the computer's key yet (setAuthorized
// (false)) answers the host's CNXN with AUTH(TOKEN, 0, 20 random bytes),
// and each signature with a new token; the host then sends its public key
// (AUTH RSAPUBLICKEY), which a device shows its user, and waits: the adb
// server lists it as `unauthorized`. setAuthorized(true) is the user
// accepting: every connection waiting so is answered with CNXN.
//
// Every service opened is logged (to the file given and to onOpen), so a
// check can hold the services used to a list.
//
// Run alone:
//   node device.js [--port N] [--log FILE] [--legacy-shell] [--old-protocol] SCENARIO_DIR
// prints `listening PORT`; on stdin `play NAME` plays SCENARIO_DIR/NAME
// (.logcat) and prints `played NAME`, `flood N [PID]` logs N lines of
// another process (or the app's console under PID) at once and prints
// `flooded N`, `drop` ends every connection (the
// device goes away; the port stays open), `quit` ends.
const { spawn } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const readline = require('node:readline');
const { LINE, DIVIDER, parseLogcat, parseStamp, shellWords, stamp } = require('./logcat.js');

const A_CNXN = 0x4e584e43;
const A_OPEN = 0x4e45504f;
const A_OKAY = 0x59414b4f;
const A_CLSE = 0x45534c43;
const A_WRTE = 0x45545257;
const A_AUTH = 0x48545541;
const AUTH_TOKEN = 1;
const AUTH_SIGNATURE = 2;
const AUTH_RSAPUBLICKEY = 3;
const A_VERSION = 0x01000001;
const A_VERSION_MIN = 0x01000000; // before Android 9: checksums checked
const A_VERSION_SKIP_CHECKSUM = 0x01000001;
const MAX_PAYLOAD = 256 * 1024; // what adbd of Android 9 and 10 offers
const MAX_PAYLOAD_V1 = 4 * 1024; // and before them
const MAX_HISTORY = 20000; // lines logd keeps, here
const COMMANDS = { [A_CNXN]: 'CNXN', [A_OPEN]: 'OPEN', [A_OKAY]: 'OKAY', [A_CLSE]: 'CLSE', [A_WRTE]: 'WRTE', [A_AUTH]: 'AUTH' };

const START_PROC = /ActivityManager: Start proc (\d+):([^/\s]+)/;
const DIED = /ActivityManager: Process (\S+) \(pid (\d+)\) has died/;

function checksum(buf) {
  let sum = 0;
  for (const b of buf) sum = (sum + b) >>> 0;
  return sum;
}

function message(command, arg0, arg1, data = Buffer.alloc(0)) {
  const header = Buffer.alloc(24);
  header.writeUInt32LE(command, 0);
  header.writeUInt32LE(arg0 >>> 0, 4);
  header.writeUInt32LE(arg1 >>> 0, 8);
  header.writeUInt32LE(data.length, 12);
  header.writeUInt32LE(checksum(data), 16);
  header.writeUInt32LE((command ^ 0xffffffff) >>> 0, 20);
  return Buffer.concat([header, data]);
}

// startDevice serves one device on 127.0.0.1:port (0: any free port).
// opts: scenarioDir, logFile, legacyShell (no shell_v2: Android 6 and
// older), oldProtocol (version 0x01000000 with 4 KiB messages, whose
// checksums both sides check: Android 8 and older), product, model and
// device for the banner.
function startDevice({ port = 0, scenarioDir, logFile = null, legacyShell = false, oldProtocol = false, onOpen = () => {}, product = 'sdk_gphone64_x86_64', model = 'sdk_gphone64_x86_64', device = 'emu64xa' } = {}) {
  const history = []; // { ms, text, pid, buffer } in the order logd got them
  const processes = new Map(); // pid → package
  const streams = new Set(); // open logcat streams, to feed new lines to
  const connections = new Set();
  let buffer = 'main';
  let opened = 0;
  let authorized = true;
  const waitingAuth = new Set(); // connections whose host waits for the user to accept its key
  const features = legacyShell ? 'cmd' : 'shell_v2,cmd';
  const banner = Buffer.from(`device::ro.product.name=${product};ro.product.model=${model};ro.product.device=${device};features=${features}`);

  function record(service, extra = {}) {
    opened++;
    const entry = { at: Date.now(), service, ...extra };
    if (logFile) fs.appendFileSync(logFile, JSON.stringify(entry) + '\n');
    onOpen(entry);
  }

  const server = net.createServer((sock) => {
    connections.add(sock);
    sock.setNoDelay(true);
    let input = Buffer.alloc(0);
    const ourVersion = oldProtocol ? A_VERSION_MIN : A_VERSION;
    const ourMax = oldProtocol ? MAX_PAYLOAD_V1 : MAX_PAYLOAD;
    let version = ourVersion;
    let maxData = ourMax;
    let connected = false;
    let nextId = 1;
    const local = new Map(); // our id → stream

    const send = (cmd, a0, a1, data) => {
      if (!sock.destroyed) sock.write(message(cmd, a0, a1, data));
    };

    // A stream: bytes queued and sent one WRTE at a time, each after the
    // host's OKAY for the one before.
    function openStream(remoteId, service) {
      const id = nextId++;
      const s = { id, remoteId, queue: [], waiting: false, closed: false, closing: false, v2: false, logcat: null, service };
      local.set(id, s);
      s.flush = () => {
        if (s.closed || s.waiting) return;
        if (s.queue.length === 0) {
          if (s.closing) close(s, true);
          return;
        }
        // As much as one message holds, taken from the front of the queue
        // without copying the rest (a flood may queue megabytes).
        const parts = [];
        let room = maxData;
        while (room > 0 && s.queue.length) {
          const head = s.queue[0];
          if (head.length <= room) {
            parts.push(s.queue.shift());
            room -= head.length;
          } else {
            parts.push(head.subarray(0, room));
            s.queue[0] = head.subarray(room);
            room = 0;
          }
        }
        s.waiting = true;
        send(A_WRTE, s.id, s.remoteId, Buffer.concat(parts));
      };
      s.write = (id2, bytes) => {
        if (s.closed) return;
        const data = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes);
        if (s.v2) {
          const h = Buffer.alloc(5);
          h[0] = id2;
          h.writeUInt32LE(data.length, 1);
          s.queue.push(Buffer.concat([h, data]));
        } else if (id2 === 1 || id2 === 2) {
          s.queue.push(data);
        }
        s.flush();
      };
      s.exit = (status) => {
        s.write(3, Buffer.from([status & 0xff]));
        s.closing = true;
        s.flush();
      };
      return s;
    }

    function close(s, tellHost) {
      if (s.closed) return;
      s.closed = true;
      local.delete(s.id);
      streams.delete(s);
      if (tellHost) send(A_CLSE, s.id, s.remoteId);
      if (s.logcat) record(s.service, { event: 'closed', by: tellHost ? 'device' : 'host' });
    }

    function serve(remoteId, service) {
      const m = /^shell(,[^:]*)?:(.*)$/s.exec(service);
      if (!m) {
        record(service, { refused: true });
        send(A_CLSE, 0, remoteId);
        return;
      }
      const shellArgs = (m[1] || '').split(',').filter(Boolean);
      const s = openStream(remoteId, service);
      s.v2 = shellArgs.includes('v2');
      if (s.v2 && legacyShell) {
        record(service, { refused: true });
        local.delete(s.id);
        send(A_CLSE, 0, remoteId);
        return;
      }
      send(A_OKAY, s.id, remoteId);
      const words = shellWords(m[2]);
      // `export ANDROID_LOG_TAGS=…; exec logcat …` is how adb's client runs
      // logcat; what follows `exec` is the command.
      let cmd = words;
      const semi = cmd.lastIndexOf(';');
      if (semi >= 0) cmd = cmd.slice(semi + 1);
      if (cmd[0] === 'exec') cmd = cmd.slice(1);
      if (cmd[0] === 'pidof') {
        record(service);
        const pids = [];
        for (const name of cmd.slice(1)) for (const [pid, pkg] of processes) if (pkg === name) pids.push(pid);
        if (pids.length) s.write(1, pids.sort((a, b) => a - b).join(' ') + '\n');
        s.exit(pids.length ? 0 : 1);
      } else if (cmd[0] === 'logcat') {
        let o;
        try {
          o = parseLogcat(cmd.slice(1));
        } catch (err) {
          record(service, { error: err.message });
          s.write(2, `logcat: ${err.message}\n`);
          s.exit(1);
          return;
        }
        record(service, o.writes.length ? { writes: o.writes } : {});
        if (o.writes.length) {
          s.write(2, `logcat: ${o.writes.join(' ')}: this device's logs are read only here\n`);
          s.exit(1);
          return;
        }
        s.logcat = { ...o, last: null, printed: new Set() };
        let lines = history.filter((l) => wanted(s, l));
        if (o.since !== null) lines = lines.filter((l) => l.ms >= o.since);
        if (o.tail !== null) lines = lines.slice(Math.max(0, lines.length - o.tail));
        for (const l of lines) emit(s, l);
        if (o.dump) s.exit(0);
        else streams.add(s);
      } else {
        record(service, { refused: true });
        s.write(2, `/system/bin/sh: ${cmd[0] ?? ''}: inaccessible or not found\n`);
        s.exit(127);
      }
    }

    sock.on('data', (chunk) => {
      input = Buffer.concat([input, chunk]);
      while (input.length >= 24) {
        const cmd = input.readUInt32LE(0);
        const arg0 = input.readUInt32LE(4);
        const arg1 = input.readUInt32LE(8);
        const len = input.readUInt32LE(12);
        const sum = input.readUInt32LE(16);
        const magic = input.readUInt32LE(20);
        if (magic !== (cmd ^ 0xffffffff) >>> 0 || len > MAX_PAYLOAD * 4) {
          console.error(`device: bad message header (command 0x${cmd.toString(16)}, length ${len}); closing the connection`);
          sock.destroy();
          return;
        }
        if (input.length < 24 + len) return;
        const data = input.subarray(24, 24 + len);
        input = input.subarray(24 + len);
        if (version < A_VERSION_SKIP_CHECKSUM && checksum(data) !== sum) {
          console.error(`device: ${COMMANDS[cmd] ?? cmd} with a wrong checksum; closing the connection`);
          sock.destroy();
          return;
        }
        if (cmd === A_CNXN) {
          version = Math.min(arg0, ourVersion);
          maxData = Math.min(arg1, ourMax);
          if (authorized) accept();
          else send(A_AUTH, AUTH_TOKEN, 0, crypto.randomBytes(20));
        } else if (cmd === A_AUTH && !connected) {
          // A signature of our token with a key we do not know: a new
          // token. The public key: shown to the user, who has not accepted.
          if (arg0 === AUTH_SIGNATURE) send(A_AUTH, AUTH_TOKEN, 0, crypto.randomBytes(20));
          else if (arg0 === AUTH_RSAPUBLICKEY) waitingAuth.add(accept);
        } else if (!connected) {
          console.error(`device: ${COMMANDS[cmd] ?? cmd} before CNXN; closing the connection`);
          sock.destroy();
          return;
        } else if (cmd === A_OPEN) {
          serve(arg0, data.toString('utf8').replace(/\0+$/, ''));
        } else if (cmd === A_OKAY) {
          const s = local.get(arg1);
          if (s) {
            s.waiting = false;
            s.flush();
          }
        } else if (cmd === A_WRTE) {
          // stdin of a shell (under shell_v2: packets such as 4, close
          // stdin): taken and acknowledged; nothing here reads stdin.
          if (local.has(arg1)) send(A_OKAY, arg1, arg0);
        } else if (cmd === A_CLSE) {
          const s = local.get(arg1);
          if (s) close(s, false);
        }
      }
    });
    function accept() {
      if (connected) return;
      connected = true;
      waitingAuth.delete(accept);
      send(A_CNXN, ourVersion, ourMax, banner);
    }
    const drop = () => {
      waitingAuth.delete(accept);
      connections.delete(sock);
      for (const s of [...local.values()]) close(s, false);
    };
    sock.on('close', drop);
    sock.on('error', () => {});
  });

  function wanted(s, l) {
    if (!s.logcat.buffers.includes(l.buffer)) return false;
    if (s.logcat.pid !== null && l.pid !== s.logcat.pid) return false;
    return true;
  }

  function emit(s, l) {
    const lc = s.logcat;
    if (lc.last !== l.buffer && lc.buffers.length > 1 && (!lc.printed.has(l.buffer) || lc.dividers)) {
      s.write(1, `--------- ${lc.printed.has(l.buffer) ? 'switch to' : 'beginning of'} ${l.buffer}\n`);
    }
    lc.last = l.buffer;
    lc.printed.add(l.buffer);
    s.write(1, l.text + '\n');
  }

  // play logs a scenario's lines as the device would: the first now, the
  // rest at the scenario's spacing (restamped with the wall clock), each
  // fed to every logcat stream open as it is logged. It resolves when every
  // stream has had the last of them acknowledged by the adb server, with
  // { loggedAt, sentAt }: when the last line was logged, and when every
  // stream had delivered it. onLine(text, when) hears of each line as it is
  // logged.
  async function play(name, onLine = () => {}) {
    const file = path.join(scenarioDir, name.endsWith('.logcat') ? name : `${name}.logcat`);
    const raw = fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.length > 0);
    let offset = null;
    for (const text of raw) {
      const d = DIVIDER.exec(text);
      if (d) {
        buffer = d[1];
        continue;
      }
      const m = LINE.exec(text);
      let l;
      if (!m) {
        l = { ms: Date.now(), text, pid: -1, buffer };
      } else {
        const ms = parseStamp(m);
        if (offset === null) offset = Date.now() - ms;
        const at = ms + offset;
        if (at > Date.now()) await new Promise((r) => setTimeout(r, at - Date.now()));
        l = { ms: at, text: stamp(at) + text.slice(18), pid: Number(m[7]), buffer };
      }
      log(l);
      onLine(l.text, Date.now());
    }
    return delivered();
  }

  // log is logd taking one line: kept, the process table updated, and fed
  // to every logcat stream that wants it.
  function log(l) {
    history.push(l);
    if (history.length > MAX_HISTORY * 2) history.splice(0, history.length - MAX_HISTORY);
    const start = START_PROC.exec(l.text);
    if (start) processes.set(Number(start[1]), start[2]);
    const died = DIED.exec(l.text);
    if (died && processes.get(Number(died[2])) === died[1]) processes.delete(Number(died[2]));
    for (const s of streams) if (wanted(s, l)) emit(s, l);
  }

  async function delivered() {
    const loggedAt = Date.now();
    for (;;) {
      if (![...streams].some((s) => !s.closed && (s.queue.length || s.waiting))) return { loggedAt, sentAt: Date.now() };
      await new Promise((r) => setTimeout(r, 2));
    }
  }

  // flood logs n lines as fast as logd takes them, as a busy device does,
  // yielding now and then so the streams can send; it resolves as play
  // does. The lines are another process's (SystemUI, pid 1502), or with
  // appPid the app's own console (ReactNativeJS under that pid).
  async function flood(n, appPid = 0) {
    for (let i = 0; i < n; i++) {
      const ms = Date.now();
      const text = appPid
        ? `${stamp(ms)} ${String(appPid).padStart(5)} ${String(appPid + 21).padStart(5)} I ReactNativeJS: render tick ${i} of ${n}`
        : `${stamp(ms)}  1502  1530 D SystemUI: flood ${i} of ${n}: NotificationStackScrollLayout onLayout height=2154 top=0 children=${i % 40}`;
      log({ ms, text, pid: appPid || 1502, buffer: 'main' });
      if (i % 500 === 499) await new Promise((r) => setImmediate(r));
    }
    return delivered();
  }

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      resolve({
        port: server.address().port,
        play,
        flood,
        opened: () => opened,
        openLogcats: () => [...streams].filter((s) => !s.closed).length,
        // logcatStates says of each open logcat stream whether it waits for
        // the server's OKAY and how many bytes it holds: a stalled stream
        // shows here.
        logcatStates: () => [...streams].filter((s) => !s.closed).map((s) => ({ waiting: s.waiting, queued: s.queue.reduce((n, b) => n + b.length, 0) })),
        pids: (pkg) => [...processes].filter(([, p]) => p === pkg).map(([pid]) => pid),
        // drop ends every connection, as a device that goes away (cable
        // out, Wi-Fi lost, rebooting) does; the port stays open, so the
        // adb server may connect again.
        drop() {
          for (const c of connections) c.destroy();
        },
        connections: () => connections.size,
        // setAuthorized(false): connections from now on wait for the user
        // to accept the host's key; setAuthorized(true): the user accepts,
        // and the connections waiting are answered.
        setAuthorized(ok) {
          authorized = ok;
          if (ok) for (const accept of [...waitingAuth]) accept();
        },
        stop() {
          for (const c of connections) c.destroy();
          return new Promise((r) => server.close(() => r()));
        },
      });
    });
  });
}

// privateAdb returns runAdb(...args): the real adb at adbPath on a private
// adb server (port), its key pair kept under home rather than the user's
// ~/.android, each run ended after stepMs. It resolves {status, stdout,
// stderr}. Never spawnSync adb: the device stand-in answers from this
// process, which would be blocked.
function privateAdb(adbPath, port, home, stepMs) {
  const env = { ...process.env, ANDROID_ADB_SERVER_PORT: String(port), HOME: home };
  return (...a) => new Promise((resolve) => {
    const child = spawn(adbPath, ['-P', String(port), ...a], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), stepMs);
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status: status ?? signal, stdout, stderr });
    });
  });
}

module.exports = { startDevice, privateAdb };

if (require.main === module) {
  const args = process.argv.slice(2);
  const opts = { port: 0, legacyShell: false, logFile: null, scenarioDir: null };
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--port') opts.port = Number(args[++i]);
    else if (args[i] === '--log') opts.logFile = args[++i];
    else if (args[i] === '--legacy-shell') opts.legacyShell = true;
    else if (args[i] === '--old-protocol') opts.oldProtocol = true;
    else opts.scenarioDir = args[i];
  }
  if (!opts.scenarioDir) {
    console.error('usage: node device.js [--port N] [--log FILE] [--legacy-shell] [--old-protocol] SCENARIO_DIR');
    process.exit(2);
  }
  opts.onOpen = (e) => console.error(`device: ${JSON.stringify(e)}`);
  startDevice(opts).then((dev) => {
    console.log(`listening ${dev.port}`);
    readline.createInterface({ input: process.stdin }).on('line', async (line) => {
      const [cmd, name] = line.trim().split(/\s+/);
      if (cmd === 'play' && name) {
        await dev.play(name);
        console.log(`played ${name}`);
      } else if (cmd === 'flood' && /^\d+$/.test(name ?? '')) {
        await dev.flood(Number(name), Number(line.trim().split(/\s+/)[2] ?? 0));
        console.log(`flooded ${name}`);
      } else if (cmd === 'drop') {
        dev.drop();
        console.log('dropped');
      } else if (cmd === 'quit') {
        await dev.stop();
        process.exit(0);
      }
    });
  }, (err) => {
    console.error(`device: ${err.message}`);
    process.exit(1);
  });
}
