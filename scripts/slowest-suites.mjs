/**
 * A Jest reporter that prints the ten slowest test files at the end of every run (issue 28: where
 * the suite's time goes, so it stays fast). Wall time per file, as Jest measured it.
 *
 * `npm test` runs Jest more than once (scripts/run.mjs): each run adds its files to
 * SLOWEST_SUITES_FILE, and the last (SLOWEST_SUITES_LAST) prints the ten slowest of them all, with
 * the wall time since SLOWEST_SUITES_SINCE (when npm test started, in ms since the epoch; else since
 * this Jest run started).
 */
import { appendFileSync, readFileSync } from "node:fs";

export default class SlowestSuites {
  onRunComplete(_contexts, results) {
    const root = process.cwd() + "/";
    let suites = results.testResults
      .map((r) => ({ path: r.testFilePath.replace(root, ""), seconds: (r.perfStats.end - r.perfStats.start) / 1000 }))
      .filter((s) => Number.isFinite(s.seconds));
    const file = process.env.SLOWEST_SUITES_FILE;
    if (file) {
      appendFileSync(file, suites.map((s) => JSON.stringify(s) + "\n").join(""));
      if (!process.env.SLOWEST_SUITES_LAST) return;
      suites = readFileSync(file, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line));
    }
    if (suites.length < 2) return;
    suites.sort((a, b) => b.seconds - a.seconds);
    const total = suites.reduce((sum, s) => sum + s.seconds, 0);
    // The whole npm test's wall time, else this Jest run's.
    const since = Number(process.env.SLOWEST_SUITES_SINCE) || results.startTime;
    const wall = `; ${((Date.now() - since) / 1000).toFixed(0)} s wall time`;
    const lines = suites.slice(0, 10).map((s) => `  ${s.seconds.toFixed(1).padStart(7)} s  ${s.path}`);
    process.stderr.write(`\nThe ten slowest test files (of ${suites.length}, ${total.toFixed(0)} s in all${wall}):\n${lines.join("\n")}\n`);
  }
}
