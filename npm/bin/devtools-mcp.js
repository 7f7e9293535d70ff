#!/usr/bin/env node
// The devtools-mcp command: runs the native binary of the platform package
// that npm installed next to this one (one optional dependency per
// platform, of which npm installs only the one matching os and cpu).
//
// stdout is the MCP channel: this script never writes to it. The binary
// inherits stdin, stdout and stderr, gets the signals this process gets,
// and its exit is this process's exit.
"use strict";

const { spawn } = require("child_process");
const fs = require("fs");
const os = require("os");

const launcher = require("../package.json");

const exe = process.platform === "win32" ? "devtools-mcp.exe" : "devtools-mcp";
const target = `${process.platform}-${process.arch}`;
// Platform packages are named after this one, so that the name is written
// in one place only (package.json).
const platformPackage = `${launcher.name}-${target}`;

function fail(lines) {
  // Written synchronously: process.stderr may be asynchronous (a pipe on
  // Windows), and process.exit would cut the message short.
  try {
    fs.writeSync(2, lines.map((l) => `${launcher.name}: ${l}\n`).join(""));
  } catch {
    // stderr is closed: the exit status still tells.
  }
  process.exit(1);
}

function binaryPath() {
  const override = process.env.DEVTOOLS_MCP_BINARY;
  if (override) {
    return override;
  }
  try {
    return require.resolve(`${platformPackage}/bin/${exe}`);
  } catch (err) {
    if (err && err.code !== "MODULE_NOT_FOUND") {
      throw err;
    }
  }
  const supported = Object.keys(launcher.optionalDependencies || {})
    .map((name) => name.slice(launcher.name.length + 1))
    .sort();
  const help = [
    `no binary: the package ${platformPackage} is not installed ` +
      `(looked for it for process.platform "${process.platform}", process.arch "${process.arch}").`,
  ];
  if (supported.includes(target)) {
    help.push(
      `It is an optional dependency of ${launcher.name}@${launcher.version}, so npm skips it when installing ` +
        "with --no-optional or --omit=optional, or from a lockfile made without it.",
      `Install again without those options (npx -y ${launcher.name} does), or add it yourself: ` +
        `npm install ${platformPackage}@${launcher.version}`,
    );
  } else {
    help.push(
      `There is no package for this platform; the packages cover ${supported.join(", ")}.`,
      "Build the binary from source with Go (CGO_ENABLED=0 go build -o devtools-mcp . in the repository).",
    );
  }
  help.push("Or set DEVTOOLS_MCP_BINARY to the path of a devtools-mcp binary.");
  fail(help);
}

const bin = binaryPath();
const child = spawn(bin, process.argv.slice(2), { stdio: "inherit", windowsHide: true });

// A terminal's Ctrl+C reaches both processes; a signal sent to this one
// alone (an MCP client stopping its server) must reach the binary too.
// While a handler is installed, Node does not die of the signal itself.
const forwarded = ["SIGINT", "SIGTERM", "SIGHUP"];
for (const signal of forwarded) {
  process.on(signal, () => {
    try {
      child.kill(signal);
    } catch {
      // The child is gone already: its exit event ends this process.
    }
  });
}

// npx runs this script through a shell (npm exec, sh -c, node), and npm
// passes a SIGTERM on to that shell only, which dies without passing it
// further: this process is then re-parented. Whoever started it is gone and
// nobody reads the binary's output any more, so the binary is stopped as if
// the signal had come here. (Windows does not re-parent; its console and
// job objects end such trees.)
const parent = process.ppid;
if (process.platform !== "win32") {
  const orphaned = setInterval(() => {
    if (process.ppid !== parent) {
      clearInterval(orphaned);
      try {
        child.kill("SIGTERM");
      } catch {
        // Gone already.
      }
    }
  }, 250);
  orphaned.unref();
}

child.on("error", (err) => {
  fail([`cannot run ${bin}: ${err.message}`]);
});

child.on("exit", (code, signal) => {
  if (signal) {
    // Die of the same signal, so that whoever started us sees what happened
    // to the binary; a signal whose default is not to end the process
    // falls back to the shell's convention, 128 + its number.
    for (const s of forwarded) {
      process.removeAllListeners(s);
    }
    try {
      process.kill(process.pid, signal);
    } catch {
      // No such signal here: the exit below reports it.
    }
    process.exit(128 + (os.constants.signals[signal] || 0));
  }
  process.exit(code === null ? 1 : code);
});
