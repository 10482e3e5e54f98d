/**
 * The captured pages behind web-blocks.test.ts's last group, read in a Node process of its own
 * (../in-node.ts): each web page's four blocks, extractor by extractor.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { all, parseHtml } from "../../src/html/index.js";
import { extractAiOverview } from "../../src/kinds/web-search/ai-overview.js";
import { extractKnowledgeGraph } from "../../src/kinds/web-search/knowledge-graph.js";
import { extractRelatedQuestions } from "../../src/kinds/web-search/related-questions.js";
import { extractTopStories } from "../../src/kinds/web-search/top-stories.js";

export function extractedBlocks(fixturesDir: string) {
  const pages = ["web", "web-mobile", "web-nojs"].flatMap((dir) => readdirSync(join(fixturesDir, dir)).map((f) => `${dir}/${f}`));
  return pages.map((name) => {
    const html = readFileSync(join(fixturesDir, name), "utf8");
    const doc = parseHtml(html);
    return {
      name,
      // A page a browser tool saved after questions were opened (SingleFile) keeps the questions that
      // opening them loaded; a page as served shows the first few of each list.
      savedAfterUse: html.slice(0, 2000).includes("Page saved with SingleFile"),
      shownPairs: all("div.related-question-pair", doc).filter((pair) => !pair.attribs.class!.includes("sf-hidden")).length,
      questions: extractRelatedQuestions(doc),
      stories: extractTopStories(doc),
      graph: extractKnowledgeGraph(doc),
      overview: extractAiOverview(doc),
    };
  });
}
