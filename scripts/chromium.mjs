/**
 * Debian's chromium (and xvfb, for a headed browser) for the browser transport, installed with
 * apt-get when missing and allowed (root), as redis-server is. Skipped when the workers use a remote
 * browser (BROWSER_CDP_URL or BROWSER_WS_ENDPOINT) or name another executable that exists.
 * Plain JavaScript with Node's standard library only: it runs before dependencies are installed.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

const DEFAULT_PATH = "/usr/bin/chromium";

/** Ensures a local Chromium when one is needed; says what it did. Never throws: without one, browser rungs fail and say so. */
export function ensureChromium(env = process.env, say = (m) => console.log(`[run] ${m}`)) {
  if (env.BROWSER_CDP_URL || env.BROWSER_WS_ENDPOINT) return;
  const path = env.BROWSER_EXECUTABLE_PATH || DEFAULT_PATH;
  const wanted = [existsSync(path) ? undefined : "chromium", existsSync("/usr/bin/Xvfb") ? undefined : "xvfb"].filter(Boolean);
  if (!wanted.length) return;
  if (path !== DEFAULT_PATH && !existsSync(path)) {
    say(`BROWSER_EXECUTABLE_PATH ${path} does not exist: browser profiles will fail until it does`);
    return;
  }
  const canInstall = process.getuid?.() === 0 && spawnSync("sh", ["-c", "command -v apt-get"]).status === 0;
  if (!canInstall) {
    say(`${wanted.join(" and ")} not found and cannot be installed here (needs root and apt-get): browser profiles will fail, and browser tests skip`);
    return;
  }
  say(`${wanted.join(" and ")} not found: installing Debian's ${wanted.join(" ")}…`);
  const aptEnv = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  for (const args of [["update", "-qq"], ["install", "-y", "-qq", ...wanted]]) {
    if (spawnSync("apt-get", args, { stdio: "inherit", env: aptEnv }).status !== 0) {
      say(`apt-get ${args[0]} failed: browser profiles will fail until ${wanted.join(" and ")} are installed`);
      return;
    }
  }
}
