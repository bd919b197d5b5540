/**
 * Server-side request forgery guard for webhook endpoints. A seller names the URL, so without
 * this a delivery could reach the service's own network: loopback, private ranges, link-local
 * and cloud metadata addresses. The URL is checked when it is registered, and again at every
 * delivery by the `lookup` the request connects through (connectVia): the address checked is
 * the address connected to, so a DNS answer that changes after registration (DNS rebinding) is
 * checked too. The ranges are node's own net.BlockList, which also matches the IPv4-mapped IPv6
 * forms (::ffff:127.0.0.1) of the IPv4 ranges.
 */
import dns from 'node:dns';
import net from 'node:net';

const blocked = new net.BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // RFC 1918
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12], // RFC 1918
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16], // RFC 1918
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['64:ff9b::', 96], // NAT64 of IPv4 (could reach any IPv4 range)
  ['fc00::', 7], // unique local (includes fd00:ec2::254, a metadata address)
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

/** Why an address may not be reached, or undefined when it may. */
export function refusedAddress(address: string): string | undefined {
  const family = net.isIP(address);
  if (family === 0) return `'${address}' is not an IP address`;
  return blocked.check(address, family === 4 ? 'ipv4' : 'ipv6') ? `${address} is a loopback, private, link-local, multicast or metadata address` : undefined;
}

export class EndpointRefused extends Error {}

export interface EndpointRules {
  readonly allowHttp: boolean;
  readonly allowPrivateAddresses: boolean;
}

/** The URL's host without IPv6 brackets. */
const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

/** The URL if it may be registered; an EndpointRefused saying why not. Resolves its host. */
export async function checkEndpoint(raw: string, rules: EndpointRules): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new EndpointRefused(`'${raw.slice(0, 200)}' is not an absolute URL`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && rules.allowHttp)) {
    throw new EndpointRefused(`the endpoint must be an https:// URL${rules.allowHttp ? ' or http:// URL' : ''}, not ${url.protocol}`);
  }
  if (url.username || url.password) throw new EndpointRefused('the endpoint URL may not carry a user name or password');
  if (rules.allowPrivateAddresses) return url;
  const host = hostOf(url);
  const addresses = net.isIP(host) ? [host] : await resolve(host);
  for (const address of addresses) {
    const why = refusedAddress(address);
    if (why) throw new EndpointRefused(`the endpoint's host ${host} resolves to ${why}`);
  }
  return url;
}

async function resolve(host: string): Promise<string[]> {
  try {
    return (await dns.promises.lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  } catch {
    throw new EndpointRefused(`the endpoint's host ${host} cannot be resolved`);
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * The `lookup` for http.request: resolves as node would, then refuses the connection when the
 * address it would connect to is one the rules forbid. Hosts that are IP literals never reach a
 * lookup, so deliveries check those first (refusedHost).
 */
export function guardedLookup(rules: EndpointRules) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { ...options, verbatim: true }, (error, address, family) => {
      if (error) return callback(error, address, family);
      const list = Array.isArray(address) ? address : [{ address, family }];
      if (!rules.allowPrivateAddresses) {
        for (const a of list) {
          const why = refusedAddress(a.address);
          if (why) return callback(Object.assign(new Error(`refused: ${hostname} resolves to ${why}`), { code: 'EWEBHOOKREFUSED' }), address, family);
        }
      }
      callback(null, address, family);
    });
  };
}

/** Why a delivery to the URL may not go out before any lookup (its scheme, an IP-literal host). */
export function refusedHost(url: URL, rules: EndpointRules): string | undefined {
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && rules.allowHttp)) return `the endpoint's scheme ${url.protocol} is not allowed`;
  const host = hostOf(url);
  if (rules.allowPrivateAddresses || net.isIP(host) === 0) return undefined;
  return refusedAddress(host);
}
