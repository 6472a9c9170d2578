import { displayUrl } from './display-url';

describe('displayUrl', () => {
  it('names localhost for every interface and for loopback, so the service and the demo print the same host', () => {
    for (const bound of [null, undefined, '', '0.0.0.0', '::', '[::]', 'localhost', '127.0.0.1', '127.0.1.1', '::1', '[::1]']) {
      expect(displayUrl(5001, bound)).toBe('http://localhost:5001');
    }
  });

  it('names any other bound address as it is, an IPv6 one in brackets', () => {
    expect(displayUrl(5001, '10.1.2.3')).toBe('http://10.1.2.3:5001');
    expect(displayUrl(8080, 'monitor.bank.example')).toBe('http://monitor.bank.example:8080');
    expect(displayUrl(5001, 'fd00::5')).toBe('http://[fd00::5]:5001');
  });
});
