'use strict';
// What the device stand-in (device.js) knows of logcat: its threadtime
// line and buffer dividers, its clock (MM-DD HH:MM:SS.mmm, UTC here), the
// options it is run with, and the shell words adb's client wraps them in.

// A threadtime line's prefix: date, time, pid, tid, level.
const LINE = /^(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{3})\s+(\d+)\s+(\d+) ([VDIWEFA]) /;
// What logcat prints between buffers (`-D`: at every switch).
const DIVIDER = /^--------- (?:beginning of|switch to) (\w+)$/;

// shellWords splits a command line as /system/bin/sh would for the words
// adb writes: single quotes, double quotes, backslashes.
function shellWords(s) {
  const words = [];
  let cur = null;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === "'") {
      const end = s.indexOf("'", i + 1);
      cur = (cur ?? '') + s.slice(i + 1, end < 0 ? s.length : end);
      i = end < 0 ? s.length : end;
    } else if (c === '"') {
      let j = i + 1;
      let part = '';
      while (j < s.length && s[j] !== '"') {
        if (s[j] === '\\' && j + 1 < s.length) j++;
        part += s[j++];
      }
      cur = (cur ?? '') + part;
      i = j;
    } else if (c === '\\' && i + 1 < s.length) {
      cur = (cur ?? '') + s[++i];
    } else if (c === ' ' || c === '\t' || c === ';' || c === '\n') {
      if (cur !== null) words.push(cur);
      cur = null;
      if (c === ';') words.push(';');
    } else {
      cur = (cur ?? '') + c;
    }
  }
  if (cur !== null) words.push(cur);
  return words;
}

function pad2(n) {
  return String(n).padStart(2, '0');
}

function stamp(ms) {
  const d = new Date(ms);
  return `${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())} ${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())}.${String(d.getUTCMilliseconds()).padStart(3, '0')}`;
}

// parseStamp reads MM-DD HH:MM:SS.mmm in the current (UTC) year.
function parseStamp(m, year = new Date().getUTCFullYear()) {
  return Date.UTC(year, Number(m[1]) - 1, Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
}

// parseLogcat reads the arguments logcat got; what it cannot serve is an
// error, written on stderr with status 1 as logcat does for bad options.
function parseLogcat(args) {
  const o = { buffers: ['main', 'system', 'crash'], dump: false, tail: null, since: null, pid: null, dividers: false, writes: [] };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const value = () => {
      if (i + 1 >= args.length) throw new Error(`option ${a} needs a value`);
      return args[++i];
    };
    if (a === '-v') {
      const v = value();
      if (v !== 'threadtime') throw new Error(`format ${v}: this device serves -v threadtime only`);
    } else if (a === '-b') {
      const v = value();
      o.buffers = v === 'all' || v === 'default' ? (v === 'all' ? ['main', 'system', 'crash', 'radio', 'events'] : ['main', 'system', 'crash']) : v.split(',');
    } else if (a === '-d') {
      o.dump = true;
    } else if (a === '-t' || a === '-T') {
      const v = value();
      const m = /^(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{3})$/.exec(v);
      if (m) o.since = parseStamp(m);
      else if (/^\d+$/.test(v)) o.tail = Number(v);
      else throw new Error(`${a} ${v}: want a count or 'MM-DD HH:MM:SS.mmm'`);
      if (a === '-t') o.dump = true;
    } else if (a.startsWith('--pid=') || a === '--pid') {
      const v = a === '--pid' ? value() : a.slice(6);
      if (!/^\d+$/.test(v)) throw new Error(`--pid ${v}: not a pid`);
      o.pid = Number(v);
    } else if (a === '-D' || a === '--dividers') {
      o.dividers = true;
    } else if (['-c', '--clear', '-G', '-P', '-L', '-f', '-r', '-n'].includes(a) || /^--(buffer-size|prune|file|rotate)/.test(a)) {
      // Options that change the device's logs or write files: logged and
      // refused, so a check sees them.
      o.writes.push(a);
    } else if (a === '-s' || /^[\w*]+:[VDIWEFS*]$/.test(a)) {
      // filter specs: accepted, not applied (none is used).
    } else {
      throw new Error(`unknown option ${a}`);
    }
  }
  return o;
}

module.exports = { LINE, DIVIDER, parseLogcat, parseStamp, shellWords, stamp };
