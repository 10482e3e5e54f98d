/**
 * Who submits a job: what the limits read from a request and the job service, MCP tools and
 * compatibility search take. Kept here, below both, so `limits` and `jobs` need not import each other.
 */
export interface Submitter {
  accountId: string;
  maxInFlight?: number;
  /** Told the account's jobs pending or processing once the submission was counted (accepted or refused). */
  onInFlight?: (inFlight: number) => void;
}
