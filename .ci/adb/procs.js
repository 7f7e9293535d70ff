'use strict';
// The processes below one, read from /proc (Linux): how the adb check sees
// every process devtools-mcp started, and whether any outlives it.
const fs = require('node:fs');

// descendants lists the live processes below pid (children, theirs, …),
// from /proc, each with its start time so a reused pid is not taken for it.
function descendants(pid) {
  const all = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const p = procStat(Number(name));
    if (p) all.push(p);
  }
  const below = new Set([pid]);
  const out = [];
  for (let grew = true; grew;) {
    grew = false;
    for (const p of all) {
      if (!below.has(p.pid) && below.has(p.ppid)) {
        below.add(p.pid);
        out.push(p);
        grew = true;
      }
    }
  }
  return out;
}

function procStat(pid) {
  let stat;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  const close = stat.lastIndexOf(')');
  const fields = stat.slice(close + 2).split(' ');
  let cmdline = '';
  try {
    cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
  } catch {}
  // fields[0] is the state (field 3), [1] the ppid (4), [19] the start time (22).
  return { pid, state: fields[0], ppid: Number(fields[1]), start: fields[19], cmdline };
}

module.exports = { descendants, procStat };
