import { isIPv6 } from 'node:net';

/** The key an address is counted under: IPv4 as is, IPv6 by its /64 prefix. */
export function throttleAddress(ip: string | null): string {
  if (!ip) return 'unknown';
  if (!isIPv6(ip)) return ip;
  const groups = expandIPv6(ip);
  return groups ? `${groups.slice(0, 4).join(':')}::/64` : ip.slice(0, 64);
}

/** The eight 16-bit groups of an IPv6 address, without leading zeros; null when it does not parse. */
function expandIPv6(ip: string): string[] | null {
  let text = ip.replace(/%.*$/, '').toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = text.slice(0, dotted.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const missing = 8 - head.length - tail.length;
  if (missing < 0 || (halves.length === 1 && missing !== 0)) return null;
  return [...head, ...Array<string>(missing).fill('0'), ...tail].map((group) => parseInt(group, 16).toString(16));
}
