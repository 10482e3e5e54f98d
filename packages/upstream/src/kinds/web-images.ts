/** Images: the image grid of the results search. */
import { parseImages } from "../parsers/images.js";
import { filled, type UpstreamKind } from "./kind.js";
import { searchTarget } from "./url-forms.js";

export const webImages = {
  url: (params, form, ctx) => searchTarget(params, form, ctx, { tab: { modern: [["udm", "2"]], basic: [["tbm", "isch"]] } }),
  parse: parseImages,
  coverage: {
    /** Every captured page reads 1.00, and a page with half its tiles in markup the parser does not know about 0.5. */
    threshold: 0.7,
    /** The 2021 grid: `#islrg` is the placeholder, the tiles wait in the hidden `#is-results`. Tiles link their source page. */
    region: [["islrg", "is-results"], ["rso"], ["search"], ["main"]],
  },
  hasContent: (b) => filled(b.images_results),
  empty: () => ({ images_results: [] }),
} as const satisfies UpstreamKind<"web-images">;
