/**
 * The address a person opens for a service on `port` bound to `bindAddress`: localhost when it
 * listens on every interface (Nest's own getUrl() answers http://[::1]:5001) or on a loopback
 * address, the bound address otherwise. The service and the telemetry demo both print it, so a
 * person who signed in at one address and follows the other's link stays signed in (cookies belong
 * to a host name: 127.0.0.1 and localhost each keep their own).
 */
export function displayUrl(port: number, bindAddress: string | null | undefined): string {
  const bound = bindAddress?.replace(/^\[|\]$/g, '').toLowerCase();
  const everywhere = !bound || bound === '0.0.0.0' || bound === '::' || bound === 'localhost';
  const loopback = bound === '::1' || /^127(?:\.\d{1,3}){3}$/.test(bound ?? '');
  const host = everywhere || loopback ? 'localhost' : bound.includes(':') ? `[${bound}]` : bound;
  return `http://${host}:${port}`;
}
