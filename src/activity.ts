/**
 * What the layers report while they work, for the operator's metrics. It is an interface of its
 * own, below every layer, so that authentication and the $batch runner can report without
 * knowing how (or whether) anything is counted; the server wires it to the metrics registry.
 */
export type LoginOutcome = 'success' | 'failure' | 'throttled';

export interface Activity {
  /** One login attempt and how it ended. */
  login(outcome: LoginOutcome): void;
  /** One $batch request: its top-level parts, and the operations in each of its changesets. */
  batch(parts: number, changesetSizes: readonly number[]): void;
}

/** Reports nothing: what a service without metrics uses. */
export const noActivity: Activity = {
  login() {},
  batch() {},
};
