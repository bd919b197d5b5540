/**
 * What the layers report while they work, for the operator's metrics: an interface of its own,
 * so that the login endpoints and the $batch runner report without knowing how (or whether)
 * anything is counted; the server wires it to the metrics registry. It lives in auth/ because
 * that is the lowest layer that reports (the store reports through its own observeCommits), so
 * every layer that reports may import it.
 */
export type LoginOutcome = 'success' | 'failure' | 'throttled';

export interface Activity {
  /** One login attempt and how it ended. */
  login(outcome: LoginOutcome): void;
  /** One $batch request: its top-level parts, and the operations in each of its changesets. */
  batch(parts: number, changesetSizes: readonly number[]): void;
  /** A request refused because its account had too many in flight (service/admission.ts). */
  admissionRefused(reason: 'queue_full' | 'queue_timeout'): void;
}

/** Reports nothing: what a service without metrics uses. */
export const noActivity: Activity = {
  login() {},
  batch() {},
  admissionRefused() {},
};
