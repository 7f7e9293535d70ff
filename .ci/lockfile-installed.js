'use strict';
// node .ci/lockfile-installed.js <folder>: exits 0 when <folder>/node_modules
// already holds exactly what <folder>/package-lock.json locks (npm's own
// record of the tree, node_modules/.package-lock.json, lists the same
// packages with the same entries; optional packages for other platforms may
// be missing), so a check run again on the same machine skips `npm ci`.
// Exits 1 otherwise, naming the first difference.
const fs = require('node:fs');
const path = require('node:path');

const dir = process.argv[2];
function read(file) {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')).packages || {};
  } catch {
    return null;
  }
}
const locked = read('package-lock.json');
const installed = read('node_modules/.package-lock.json');
function differ(why) {
  console.log(`${dir}: ${why}`);
  process.exit(1);
}
if (!locked) differ('no package-lock.json');
if (!installed) differ('nothing installed');
for (const [key, entry] of Object.entries(locked)) {
  if (key === '') continue;
  if (!installed[key]) {
    if (entry.optional && (entry.os || entry.cpu || entry.libc)) continue;
    differ(`${key} is not installed`);
  }
  if (JSON.stringify(installed[key]) !== JSON.stringify(entry)) differ(`${key} is installed at another version or source`);
}
for (const key of Object.keys(installed)) {
  if (!locked[key]) differ(`${key} is installed but not locked`);
}
