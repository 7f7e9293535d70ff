'use strict';
// How the real-parts checks (.ci/*/check.js) report, in two forms.
//
// Steps (.ci/expo, .ci/devtools-frontend): step() prints
// "PASS: [name] ..." or "FAIL: [name] ..."; a failed step does not stop the
// ones after it, and run() ends with "<label> check: PASS" (or FAIL with
// the failed steps' names) and exit status 0 (or 1). What the check
// started is pushed onto cleanups and ended before it exits.
//
// Fail fast (.ci/metro-inspector, .ci/reactotron): pass() prints
// "PASS: ...", and fail() prints "FAIL: ..." and throws, so the first
// failure ends the check; failed() says whether any was printed.
const { sleep } = require('./mcp.js');

const results = [];
const cleanups = [];
let finishing = false;

// report prints one step's outcome and counts it.
function report(ok, name, msg) {
  results.push({ ok, name });
  console.log(`${ok ? 'PASS' : 'FAIL'}: [${name}] ${msg}`);
}

// step runs fn and reports its outcome, fn's answer or its error (a
// check's or until's message alone, any other error with its stack); a
// failure does not stop the check, so that one run says which promises
// hold and which do not. Once the check is finishing it runs nothing.
// Answers whether the step passed.
async function step(name, fn) {
  if (finishing) return false;
  try {
    const msg = await fn();
    report(true, name, msg);
    return true;
  } catch (e) {
    report(false, name, e.step ? e.message : (e.stack || String(e)));
    return false;
  }
}

// check fails the step it runs in with msg unless cond holds.
function check(cond, msg) {
  if (!cond) throw Object.assign(new Error(msg), { step: true });
}

// finish ends everything the check started (dev servers, browser, devices,
// devtools-mcp), newest first, then exits with exitCode: at the end, at
// the deadline, or when the script's timeout or a ^C stops it. Only its
// first call counts.
async function finish(exitCode) {
  if (finishing) return;
  finishing = true;
  for (const c of cleanups.reverse()) {
    try {
      await c();
    } catch {}
  }
  setTimeout(() => process.exit(exitCode), 300);
}

// run runs main as the check called label, its steps reported; an error
// main throws is a failed step "setup". When main has not ended within
// minutes, "FAIL: <what> did not finish within <minutes> minutes" ends the
// check; SIGTERM and SIGINT end it too. beforeSummary, if given, runs just
// before the summary line.
function run(main, { label, what, minutes, beforeSummary }) {
  const deadline = setTimeout(() => {
    console.log(`FAIL: ${what} did not finish within ${minutes} minutes`);
    finish(1);
  }, minutes * 60 * 1000);
  for (const signal of ['SIGTERM', 'SIGINT']) {
    process.on(signal, () => {
      console.log(`FAIL: stopped by ${signal}`);
      finish(1);
    });
  }
  main()
    .catch((e) => report(false, 'setup', e.stack || String(e)))
    .finally(() => {
      clearTimeout(deadline);
      if (beforeSummary) beforeSummary();
      const failedSteps = results.filter((r) => !r.ok).map((r) => r.name);
      console.log(`${label} check: ${failedSteps.length ? `FAIL (${failedSteps.join(', ')})` : 'PASS'}`);
      finish(failedSteps.length ? 1 : 0);
    });
}

let anyFailed = false;

// pass prints msg as a promise that holds.
function pass(msg) {
  console.log(`PASS: ${msg}`);
}

// fail prints msg as a failure and ends the check: it throws an error
// marked reported, which the check's end does not print again.
function fail(msg) {
  console.log(`FAIL: ${msg}`);
  anyFailed = true;
  throw Object.assign(new Error(msg), { reported: true });
}

// failed answers whether fail was called, even where its error was caught.
function failed() {
  return anyFailed;
}

// untilOrFail calls fn every pollMs until it answers something truthy,
// and answers that; after ms it fails the check with what.
async function untilOrFail(what, ms, fn, pollMs) {
  const deadline = Date.now() + ms;
  for (;;) {
    const got = await fn();
    if (got) return got;
    if (Date.now() > deadline) fail(`${what} (waited ${ms} ms)`);
    await sleep(pollMs);
  }
}

module.exports = { cleanups, report, step, check, run, pass, fail, failed, untilOrFail };
