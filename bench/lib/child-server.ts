/**
 * How the bench's own servers (the baseline, the floor) run as child processes: they listen on
 * PORT and HOST, say where in one JSON line, and close on SIGTERM or SIGINT.
 */
import type http from 'node:http';

export function serveFromEnvironment(server: http.Server, name: string): void {
  server.listen(Number(process.env.PORT ?? 0), process.env.HOST || '127.0.0.1', () => {
    const address = server.address() as { port: number };
    process.stdout.write(JSON.stringify({ msg: `${name} listening`, origin: `http://127.0.0.1:${address.port}` }) + '\n');
  });
  const stop = () => {
    server.close(() => process.exit(0));
    // Idle keep-alive connections would hold close() open.
    server.closeAllConnections();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
