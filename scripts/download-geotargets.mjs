#!/usr/bin/env node
/**
 * Downloads Google's official Ads geotargets file (the upstream's location list) into a folder,
 * for GEOTARGETS_DIR. The data stays outside the repository.
 *
 *   node scripts/download-geotargets.mjs [DIR]          (default: ./data/geotargets)
 *   GEOTARGETS_URL=https://…/geotargets-YYYY-MM-DD.csv.zip node scripts/download-geotargets.mjs
 *
 * Without GEOTARGETS_URL it reads the official page and takes the newest dated zip it links to.
 * The zip holds one CSV (Criteria ID, Name, Canonical Name, Parent ID, Country Code, Target Type,
 * Status); the service's location loader reads `geotargets-*.csv` from GEOTARGETS_DIR.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

const PAGE = "https://developers.google.com/google-ads/api/data/geotargets";
const dir = resolve(process.argv[2] ?? "data/geotargets");

async function newestZipUrl() {
  const html = await (await fetch(PAGE)).text();
  const links = [...html.matchAll(/href="([^"]*geotargets-(\d{4}-\d{2}-\d{2})\.csv\.zip)"/g)];
  if (!links.length) throw new Error(`no geotargets zip linked from ${PAGE}`);
  links.sort((a, b) => b[2].localeCompare(a[2]));
  return new URL(links[0][1], PAGE).href;
}

try {
  const url = process.env.GEOTARGETS_URL ?? (await newestZipUrl());
  console.log(`downloading ${url}`);
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url} answered ${res.status}`);
  mkdirSync(dir, { recursive: true });
  const zip = join(dir, url.split("/").pop());
  writeFileSync(zip, Buffer.from(await res.arrayBuffer()));
  // unzip when present, else Python's zipfile (one of them is on any Debian machine).
  const unzip = spawnSync("unzip", ["-o", zip, "-d", dir], { stdio: "inherit" });
  if (unzip.status !== 0 && spawnSync("python3", ["-m", "zipfile", "-e", zip, dir], { stdio: "inherit" }).status !== 0) {
    throw new Error(`could not extract ${zip}: install unzip or python3`);
  }
  console.log(`geotargets in ${dir}: set GEOTARGETS_DIR=${dir}`);
} catch (err) {
  console.error(`download failed: ${err.message} (the machine needs internet access; or set GEOTARGETS_URL)`);
  process.exit(1);
}
