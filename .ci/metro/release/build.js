// Builds this fixture project for release with the pinned Metro
// (minified, with its source map), runs the bundle under Node until it
// throws, and writes, to the folder named:
//   index.android.bundle, index.android.bundle.map  what Metro wrote
//   frames.txt      the frames as React Native writes them into a
//                   JavascriptException (`name@line:column`, column from 0)
//   positions.json  positions across the bundle and where source-map maps
//                   each, in both maps
//   expected.json   each frame as the `source-map` package metro-symbolicate
//                   uses maps it (originalPositionFor), with
//                   metro-symbolicate's own line for it
//   index.plain.map the same map without sections, as source-map's
//                   SourceMapGenerator writes it (Metro writes an index map)
// usage: node build.js <out folder>
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const { execFileSync } = require('node:child_process');
const Metro = require('metro');
const { mergeConfig } = require('metro-config');
const { SourceMapConsumer, SourceMapGenerator } = require('source-map');

// build writes the files above to out and answers what expected.json holds.
async function build(out) {
  fs.mkdirSync(out, { recursive: true });
  const bundle = path.join(out, 'index.android.bundle');
  const base = await Metro.loadConfig({ config: path.join(__dirname, '..', 'metro.config.js') });
  const config = mergeConfig(base, { projectRoot: __dirname });
  // Metro names the bundle `<out>.js` and the map `<out>.map`.
  await Metro.runBuild(config, {
    entry: 'index.js', out: bundle + '.js', platform: 'android', dev: false, minify: true, sourceMap: true,
  });
  fs.renameSync(bundle + '.js', bundle);
  const code = fs.readFileSync(bundle, 'utf8');
  let stack = '';
  let message = '';
  try {
    vm.runInNewContext(code, {}, { filename: 'index.android.bundle' });
  } catch (e) {
    stack = e.stack;
    message = `${e.name}: ${e.message}`;
  }
  if (!stack) throw new Error('the bundle did not throw');
  // V8 prints `at name (index.android.bundle:L:C)` with a 1-based column;
  // React Native's StackFrame has it from 0, and so has the exception.
  const frames = [];
  for (const m of stack.matchAll(/at (?:(\S+) \()?index\.android\.bundle:(\d+):(\d+)\)?/g)) {
    frames.push({ method: m[1] || 'anonymous', line: +m[2], column: +m[3] - 1 });
  }
  const lines = frames.map((f) => `${f.method}@${f.line}:${f.column}`);
  fs.writeFileSync(path.join(out, 'frames.txt'), message + '\n' + lines.join('\n') + '\n');
  const mapPath = bundle + '.map';
  const raw = JSON.parse(fs.readFileSync(mapPath, 'utf8'));
  const consumer = new SourceMapConsumer(raw);
  const symbolicate = path.join(__dirname, '..', 'node_modules', 'metro-symbolicate', 'src', 'index.js');
  const printed = execFileSync(process.execPath, [symbolicate, mapPath], { input: lines.join('\n') + '\n' })
    .toString().trim().split('\n');
  const expected = frames.map((f, i) => ({
    frame: lines[i], ...consumer.originalPositionFor({ line: f.line, column: f.column }), metroSymbolicate: printed[i],
  }));
  const plain = SourceMapGenerator.fromSourceMap(consumer).toJSON();
  fs.writeFileSync(path.join(out, 'index.plain.map'), JSON.stringify(plain));
  // Every position of the bundle, as source-map maps it in both maps, for
  // the Go test to compare line by line: a few columns on each line.
  const positions = [];
  const plainConsumer = new SourceMapConsumer(plain);
  code.split('\n').forEach((text, i) => {
    for (let c = 0; c <= text.length + 1; c += Math.max(1, Math.floor(text.length / 40))) {
      const a = consumer.originalPositionFor({ line: i + 1, column: c });
      const b = plainConsumer.originalPositionFor({ line: i + 1, column: c });
      positions.push([i + 1, c, a.source, a.line, a.column, a.name, b.source, b.line, b.column, b.name]);
    }
  });
  fs.writeFileSync(path.join(out, 'positions.json'), JSON.stringify(positions) + '\n');
  const result = { message, root: __dirname, frames: expected };
  fs.writeFileSync(path.join(out, 'expected.json'), JSON.stringify(result, null, 1) + '\n');
  return result;
}

module.exports = { build };

if (require.main === module) {
  build(path.resolve(process.argv[2] || '.')).catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
