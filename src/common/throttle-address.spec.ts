import { throttleAddress } from './throttle-address';

describe('throttleAddress (contract 13)', () => {
  it('counts IPv4 by the address and IPv6 by its /64', () => {
    expect(throttleAddress('203.0.113.7')).toBe('203.0.113.7');
    expect(throttleAddress('2001:db8:1:2:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64');
    expect(throttleAddress('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(throttleAddress('2001:0db8:0001:0002:ffff::')).toBe('2001:db8:1:2::/64');
    expect(throttleAddress('::1')).toBe('0:0:0:0::/64');
    expect(throttleAddress('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(throttleAddress('64:ff9b::192.0.2.33')).toBe('64:ff9b:0:0::/64');
    expect(throttleAddress(null)).toBe('unknown');
  });
});
