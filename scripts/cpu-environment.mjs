/**
 * Jest's node environment, plus the CPU time each test file costs (issue 28: the suite is bounded
 * by two cores, so CPU, not wall time, says which files to make cheaper). It is the Jest process's
 * own time (the file's parsing, the stacks it runs in-process) and that of the child processes it
 * has reaped (APIs, workers, servers, Chromium), from /proc/self/stat between the file's setup and
 * teardown; a Jest process runs one file at a time. Written beside SLOWEST_SUITES_FILE for the
 * slowest-files reporter. Where /proc is missing, it records nothing.
 */
import { appendFileSync, readFileSync } from "node:fs";
import { TestEnvironment } from "jest-environment-node";

/** Clock ticks per second: Linux reports /proc times in USER_HZ, 100 on every architecture Node runs on. */
const TICKS = 100;

/** This process's CPU seconds and those of the children it has waited for, or undefined without /proc. */
function cpuSeconds() {
  try {
    // Fields after the command (which is in parentheses and may hold spaces): utime is the 12th.
    const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ");
    const [utime, stime, cutime, cstime] = fields.slice(11, 15).map(Number);
    return (utime + stime + cutime + cstime) / TICKS;
  } catch {
    return undefined;
  }
}

export default class CpuEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.testPath = context.testPath;
  }

  async setup() {
    this.cpuAtStart = cpuSeconds();
    await super.setup();
  }

  async teardown() {
    await super.teardown();
    const end = cpuSeconds();
    const file = process.env.SLOWEST_SUITES_FILE;
    if (file && end !== undefined && this.cpuAtStart !== undefined) {
      appendFileSync(`${file}.cpu`, JSON.stringify({ file: this.testPath, cpu: end - this.cpuAtStart }) + "\n");
    }
  }
}
