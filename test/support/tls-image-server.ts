/**
 * An https server of the suite's own that serves pictures, as a seller's image host would: a
 * throwaway certificate for 127.0.0.1 made with openssl for each run, and the SPKI hash a test
 * browser is told to trust it by (Chromium's --ignore-certificate-errors-spki-list trusts that
 * key only, not every certificate). It records every request with its Referer, so a test can
 * check that the console sends none.
 */
import { execFileSync } from 'node:child_process';
import { createHash, createPublicKey } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { findProgram, requireProgram } from './requirements';

/** A 1×1 PNG. */
export const PNG_1X1 = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

export const OPENSSL_PATH = findProgram('openssl');

/** The skip option of a test that needs the image server: false with openssl, else why. */
export function opensslSkip(): string | false {
  return requireProgram('openssl', OPENSSL_PATH, 'apt-get install openssl');
}

export interface ImageServer {
  /** e.g. https://127.0.0.1:43123 */
  readonly origin: string;
  /** The base64 SHA-256 of the certificate's public key, for --ignore-certificate-errors-spki-list. */
  readonly spkiHash: string;
  /** Every request: its path and the Referer it carried (undefined: none). */
  readonly requests: { readonly path: string; readonly referer: string | undefined }[];
  close(): Promise<void>;
}

/** Serves PNG_1X1 at every path ending in .png; anything else answers 404. */
export async function startImageServer(): Promise<ImageServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'image-server-'));
  const keyFile = path.join(dir, 'key.pem');
  const certFile = path.join(dir, 'cert.pem');
  execFileSync(OPENSSL_PATH!, [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', keyFile, '-out', certFile,
  ], { stdio: 'ignore' });
  const key = fs.readFileSync(keyFile);
  const cert = fs.readFileSync(certFile);
  fs.rmSync(dir, { recursive: true, force: true });
  const spki = createPublicKey(cert).export({ type: 'spki', format: 'der' });
  const requests: { path: string; referer: string | undefined }[] = [];
  const server = https.createServer({ key, cert }, (req, res) => {
    requests.push({ path: req.url ?? '', referer: req.headers.referer });
    if ((req.url ?? '').split('?')[0]!.endsWith('.png')) {
      res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': String(PNG_1X1.length) });
      res.end(PNG_1X1);
    } else {
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      res.end('no such picture');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spkiHash: createHash('sha256').update(spki).digest('base64'),
    requests,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
