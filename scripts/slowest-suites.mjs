/**
 * A Jest reporter that prints the ten slowest test files at the end of every run (issue 28: where
 * the suite's time goes, so it stays fast): wall time per file, as Jest measured it, and the CPU
 * time it cost (scripts/cpu-environment.mjs), with the ten costliest in CPU, since the machine's
 * cores bound the suite.
 *
 * `npm test` runs more than one Jest at once (scripts/run.mjs): then each adds its files to
 * SLOWEST_SUITES_FILE (and the environment their CPU beside it), and run.mjs prints the report of
 * them all once every Jest has ended (`report`), with the wall time since npm test started.
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs";

const lines = (file) => (existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line)) : []);
const seconds = (s) => `${s.toFixed(1).padStart(7)} s`;

/** The report: `suites` as { path, seconds }, `cpu` a Map of path → CPU seconds, `wallSeconds` the run's. */
function write(suites, cpu, wallSeconds) {
  if (suites.length < 2) return;
  suites.sort((a, b) => b.seconds - a.seconds);
  const total = suites.reduce((sum, s) => sum + s.seconds, 0);
  const cpuTotal = [...cpu.values()].reduce((sum, c) => sum + c, 0);
  const cpuSaid = cpu.size ? `, ${cpuTotal.toFixed(0)} s of CPU` : "";
  const cpuOf = (path) => (cpu.has(path) ? `${seconds(cpu.get(path))} CPU  ` : "");
  const rows = suites.slice(0, 10).map((s) => `  ${seconds(s.seconds)}  ${cpuOf(s.path)}${s.path}`);
  let out = `\nThe ten slowest test files (of ${suites.length}, ${total.toFixed(0)} s in all${cpuSaid}; ${wallSeconds.toFixed(0)} s wall time):\n${rows.join("\n")}\n`;
  if (cpu.size) {
    const costly = [...cpu].sort((a, b) => b[1] - a[1]).slice(0, 10).map(([path, c]) => `  ${seconds(c)} CPU  ${path}`);
    out += `The ten costliest in CPU (two cores bound the suite):\n${costly.join("\n")}\n`;
  }
  process.stderr.write(out);
}

/** The report of every Jest run that wrote to `file`, with the wall time since `since` (ms since the epoch). */
export function report(file, since, root = process.cwd() + "/") {
  const cpu = new Map(lines(`${file}.cpu`).map((c) => [c.file.replace(root, ""), c.cpu]));
  write(lines(file), cpu, (Date.now() - since) / 1000);
}

export default class SlowestSuites {
  onRunComplete(_contexts, results) {
    const root = process.cwd() + "/";
    const suites = results.testResults
      .map((r) => ({ path: r.testFilePath.replace(root, ""), seconds: (r.perfStats.end - r.perfStats.start) / 1000 }))
      .filter((s) => Number.isFinite(s.seconds));
    const file = process.env.SLOWEST_SUITES_FILE;
    // Under npm test, run.mjs reports once every Jest has ended.
    if (file) appendFileSync(file, suites.map((s) => JSON.stringify(s) + "\n").join(""));
    else write(suites, new Map(), (Date.now() - results.startTime) / 1000);
  }
}
