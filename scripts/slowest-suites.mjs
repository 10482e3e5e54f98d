/**
 * A Jest reporter that prints the ten slowest test files at the end of every run (issue 28: where
 * the suite's time goes, so it stays fast). Wall time per file, as Jest measured it.
 */
export default class SlowestSuites {
  onRunComplete(_contexts, results) {
    const suites = results.testResults
      .map((r) => ({ path: r.testFilePath, seconds: (r.perfStats.end - r.perfStats.start) / 1000 }))
      .filter((s) => Number.isFinite(s.seconds))
      .sort((a, b) => b.seconds - a.seconds);
    if (suites.length < 2) return;
    const total = suites.reduce((sum, s) => sum + s.seconds, 0);
    const root = process.cwd() + "/";
    const lines = suites.slice(0, 10).map((s) => `  ${s.seconds.toFixed(1).padStart(7)} s  ${s.path.replace(root, "")}`);
    process.stderr.write(`\nThe ten slowest test files (of ${suites.length}, ${total.toFixed(0)} s in all):\n${lines.join("\n")}\n`);
  }
}
