import { readFileSync } from "node:fs";
import { parseHtml } from "/work/main/packages/upstream/src/dom.ts";
import { extractAiOverview } from "/work/main/packages/upstream/src/parsers/web/ai-overview.ts";
const doc = parseHtml(readFileSync("/work/shared/fixtures/google/web/dubai-schokolade-hamburg-desktop-2026-sanitized.html", "utf8"));
for (let i = 0; i < 1500; i++) extractAiOverview(doc);
