/**
 * A test-only preload (`node -r dist/test/support/event-loop-probe.js`, through serveProcess's
 * nodeArgs) that measures a server process's own event-loop delay, which the service does not
 * expose: a load test reads the delay of the process that served the load, not of the test
 * process that generated it.
 *
 * SIGUSR2 writes one line `event-loop-delay {"p50Ms":…,"p99Ms":…,"maxMs":…,"samples":…}` to
 * stderr with what was measured since the previous SIGUSR2 (or the start), then starts over. A
 * test sends it once when the load starts (dropping start-up and migration) and once when it
 * ends. (SIGUSR1 would start node's inspector, so it is not used.) Import only its type: loading
 * it installs the probe in the importing process.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';

export interface EventLoopDelay {
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly samples: number;
}

// 5 ms between samples: fine enough to see a blocked loop, cheap enough not to be one.
const histogram = monitorEventLoopDelay({ resolution: 5 });
histogram.enable();

process.on('SIGUSR2', () => {
  const ms = (ns: number) => Math.round(ns / 1e4) / 100;
  const figures: EventLoopDelay = { p50Ms: ms(histogram.percentile(50)), p99Ms: ms(histogram.percentile(99)), maxMs: ms(histogram.max), samples: histogram.count };
  process.stderr.write(`event-loop-delay ${JSON.stringify(figures)}\n`);
  histogram.reset();
});
