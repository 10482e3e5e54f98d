/**
 * Every way a try at the upstream can fail, one row each with all it implies: what the customer
 * reads, whether the job may be tried again later, what the breakers and the metrics call it and
 * which breaker it counts against. The pipeline (scrape.ts), the page classes (classify.ts) and the
 * breakers (breakers.ts) all read this table.
 *
 * The rows are in telling order: when every try of a job failed, the first row its tries met
 * speaks for the job. A block, time-out or network failure first (the page was never seen and a
 * later try may pass), then a results page we could not read, then the rest; a refusal last, since
 * a wall further up the ladder says more about what the kind needs.
 */
import { JOB_ERRORS } from "@serp/shared";

interface FailureRow {
  /** The job's error, in the customer's words. */
  text: string;
  /** Trying the whole job later may help: a block, a time-out, a network or upstream fault may pass; a page we cannot read, a wall or a refusal stays. */
  retryable: boolean;
  /** The try in the breakers' and the metrics' words (walls share one, and so do network and upstream faults). */
  outcome: string;
  /**
   * The breaker it counts against: the profile's (`recipe`: the recipe is dead) or the profile and
   * exit's (`path`: the address or the path is bad). A page the parser could not read counts against neither.
   */
  breaker?: "recipe" | "path";
  /** The failure a skipped rung stands for when its resting breaker last saw this row's outcome (one row per outcome). */
  standsForOutcome?: true;
  /** Told from the page itself (classify.ts), not from the fetch or the parse. */
  page?: true;
}

export const FAILURES = {
  blocked: { text: JOB_ERRORS.blocked, retryable: true, outcome: "blocked", breaker: "path", standsForOutcome: true, page: true },
  timeout: { text: JOB_ERRORS.upstreamTimeout, retryable: true, outcome: "timeout", breaker: "path", standsForOutcome: true },
  network: { text: JOB_ERRORS.network, retryable: true, outcome: "error", breaker: "path" },
  partial: { text: JOB_ERRORS.partial, retryable: false, outcome: "partial", breaker: "recipe", standsForOutcome: true },
  unparseable: { text: JOB_ERRORS.unparseable, retryable: false, outcome: "unparseable", standsForOutcome: true },
  upstream_error: { text: JOB_ERRORS.upstreamError, retryable: true, outcome: "error", breaker: "path", standsForOutcome: true, page: true },
  consent: { text: JOB_ERRORS.consent, retryable: false, outcome: "wall", breaker: "recipe", page: true },
  js_wall: { text: JOB_ERRORS.jsWall, retryable: false, outcome: "wall", breaker: "recipe", standsForOutcome: true, page: true },
  refused: { text: JOB_ERRORS.refused, retryable: false, outcome: "refused", breaker: "recipe", standsForOutcome: true, page: true },
} as const satisfies Record<string, FailureRow>;

export type FailureKind = keyof typeof FAILURES;
/** How one try ended: a page to parse, or a failure. */
export type TryOutcome = "results" | "no_results" | FailureKind;
/** What one try came to, in the breakers' and the metrics' words. */
export type Outcome = "results" | "no_results" | (typeof FAILURES)[FailureKind]["outcome"];
/**
 * What an upstream answer is. Only `results` and `no_results` pages are parsed. `refused` is the
 * upstream turning away this kind of client, whatever its address: a 403 (its answer to a TLS
 * fingerprint it does not accept) or the "browser isn't supported anymore" page (old agents, since
 * 2025-09).
 */
export type PageClass = "results" | "no_results" | { [K in FailureKind]: (typeof FAILURES)[K] extends { page: true } ? K : never }[FailureKind];

const ROWS = Object.entries(FAILURES) as [FailureKind, FailureRow][];

/** The failure kinds in telling order. */
export const TELLING: readonly FailureKind[] = ROWS.map(([kind]) => kind);

/** A try's outcome in the breakers' and the metrics' words. */
export function outcomeOf(outcome: TryOutcome): Outcome {
  return outcome === "results" || outcome === "no_results" ? outcome : FAILURES[outcome].outcome;
}

/** A resting breaker's last outcome, as the failure it stands for (a page that parsed: an upstream fault). */
export function failureOfOutcome(outcome: Outcome): FailureKind {
  return ROWS.find(([, row]) => row.standsForOutcome && row.outcome === outcome)?.[0] ?? "upstream_error";
}

/** The outcomes each breaker counts. */
export function breakerOutcomes(breaker: "recipe" | "path"): ReadonlySet<Outcome> {
  return new Set(ROWS.filter(([, row]) => row.breaker === breaker).map(([, row]) => row.outcome as Outcome));
}
