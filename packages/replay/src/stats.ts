/** Counters for drills and benchmarks: TLS handshakes, upstream requests and what the guard did to them. */
import type { GuardVerdict } from "./guard.js";

export interface ReplayStats {
  /** Completed TLS handshakes (`secureConnection`); 0 over plain HTTP. */
  tlsHandshakes: number;
  /** Upstream requests (control paths not counted). */
  requests: number;
  refused: { tls: number; ua: number; deadAgent: number; rate: number; headless: number };
  /** Answered with the JS challenge. */
  challenged: number;
  /** On a challenged path with a valid SG_SS cookie. */
  challengePassed: number;
}

const zero = (): ReplayStats => ({ tlsHandshakes: 0, requests: 0, refused: { tls: 0, ua: 0, deadAgent: 0, rate: 0, headless: 0 }, challenged: 0, challengePassed: 0 });

export class Stats {
  private counts = zero();

  handshake(): void {
    this.counts.tlsHandshakes += 1;
  }

  /** One upstream request; `verdict` unset for the paths the guard never checks. */
  request(verdict: GuardVerdict | undefined): void {
    const { counts } = this;
    counts.requests += 1;
    switch (verdict?.action) {
      case "tls":
      case "ua":
      case "rate":
      case "headless":
        counts.refused[verdict.action] += 1;
        break;
      case "dead-agent":
        counts.refused.deadAgent += 1;
        break;
      case "challenge":
        counts.challenged += 1;
        break;
      case "pass":
        if (verdict.challengePassed) counts.challengePassed += 1;
    }
  }

  current(): ReplayStats {
    return structuredClone(this.counts);
  }

  reset(): void {
    this.counts = zero();
  }
}
