/**
 * A Jest reporter that prints the ten slowest test files at the end of every run (issue 28: where
 * the suite's time goes, so it stays fast). Wall time per file, as Jest measured it, and the CPU
 * time it cost (scripts/cpu-environment.mjs), when npm test gave SLOWEST_SUITES_FILE.
 *
 * `npm test` runs Jest more than once (scripts/run.mjs): each run adds its files to
 * SLOWEST_SUITES_FILE, and the last (SLOWEST_SUITES_LAST) prints the ten slowest of them all, with
 * the wall time since SLOWEST_SUITES_SINCE (when npm test started, in ms since the epoch; else since
 * this Jest run started).
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs";

const lines = (file) => (existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line)) : []);

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
      suites = lines(file);
    }
    const cpu = new Map((file ? lines(`${file}.cpu`) : []).map((c) => [c.file.replace(root, ""), c.cpu]));
    if (suites.length < 2) return;
    suites.sort((a, b) => b.seconds - a.seconds);
    const total = suites.reduce((sum, s) => sum + s.seconds, 0);
    const cpuTotal = [...cpu.values()].reduce((sum, c) => sum + c, 0);
    const cpuOf = (path) => (cpu.has(path) ? `${cpu.get(path).toFixed(1).padStart(7)} s CPU  ` : "");
    // The whole npm test's wall time, else this Jest run's.
    const since = Number(process.env.SLOWEST_SUITES_SINCE) || results.startTime;
    const wall = `; ${((Date.now() - since) / 1000).toFixed(0)} s wall time`;
    const cpuSaid = cpu.size ? `, ${cpuTotal.toFixed(0)} s of CPU` : "";
    const rows = suites.slice(0, 10).map((s) => `  ${s.seconds.toFixed(1).padStart(7)} s  ${cpuOf(s.path)}${s.path}`);
    process.stderr.write(`\nThe ten slowest test files (of ${suites.length}, ${total.toFixed(0)} s in all${cpuSaid}${wall}):\n${rows.join("\n")}\n`);
    if (cpu.size) {
      const costly = [...cpu].sort((a, b) => b[1] - a[1]).slice(0, 10).map(([path, c]) => `  ${c.toFixed(1).padStart(7)} s CPU  ${path}`);
      process.stderr.write(`The ten costliest in CPU (the suite is bounded by the machine's cores):\n${costly.join("\n")}\n`);
    }
  }
}
