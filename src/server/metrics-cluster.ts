/**
 * Metrics with `--workers N`: each worker counts its own requests in its own registry, and one
 * scrape must give the sum over all of them. prom-client's AggregatorRegistry does the summing in
 * the primary (it asks every worker for its metrics over the cluster channel). A scrape that
 * reaches a worker (on the shared port) asks the primary for that sum over the same channel; a
 * METRICS_PORT is served by the primary itself.
 */
import cluster from 'node:cluster';
import client from 'prom-client';
import type { MetricsSource } from './metrics-endpoint';

const REQUEST = 'catalogue:metrics-request';
const ANSWER = 'catalogue:metrics-answer';
/** prom-client gives up on workers after 5 s; the worker waits a little longer for the primary. */
const ANSWER_TIMEOUT_MS = 6_000;

interface MetricsRequest {
  readonly type: typeof REQUEST;
  readonly id: number;
}
interface MetricsAnswer {
  readonly type: typeof ANSWER;
  readonly id: number;
  readonly text?: string;
  readonly error?: string;
}

/** In the primary: the summed metrics of every worker, also for the workers that ask. */
export function primaryMetricsSource(): MetricsSource {
  const aggregator = new client.AggregatorRegistry();
  const source: MetricsSource = async () => ({ text: await aggregator.clusterMetrics(), contentType: aggregator.contentType });
  cluster.on('message', (worker, message: MetricsRequest) => {
    if (message?.type !== REQUEST) return;
    source().then(
      ({ text }) => worker.isConnected() && worker.send({ type: ANSWER, id: message.id, text } satisfies MetricsAnswer),
      (error: Error) => worker.isConnected() && worker.send({ type: ANSWER, id: message.id, error: error.message } satisfies MetricsAnswer),
    );
  });
  return source;
}

/** In a worker: answer the primary's gathering with `registry`, and scrape through the primary. */
export function workerMetricsSource(registry: client.Registry): MetricsSource {
  // Constructing one installs prom-client's listener that answers the primary's requests.
  new client.AggregatorRegistry();
  client.AggregatorRegistry.setRegistries([registry]);
  let next = 0;
  const waiting = new Map<number, (answer: MetricsAnswer) => void>();
  process.on('message', (message: MetricsAnswer) => {
    if (message?.type === ANSWER) waiting.get(message.id)?.(message);
  });
  return () =>
    new Promise((resolve, reject) => {
      const id = ++next;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error('the primary process did not answer for the metrics'));
      }, ANSWER_TIMEOUT_MS);
      waiting.set(id, (answer) => {
        clearTimeout(timer);
        waiting.delete(id);
        if (answer.text !== undefined) resolve({ text: answer.text, contentType: registry.contentType });
        else reject(new Error(answer.error ?? 'no metrics'));
      });
      process.send!({ type: REQUEST, id } satisfies MetricsRequest);
    });
}
