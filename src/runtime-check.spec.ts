import { satisfiesMinimum } from './runtime-check';

describe('runtime check', () => {
  it('compares a Node.js version with a ">=" engines range', () => {
    expect(satisfiesMinimum('20.19.0', '>=20.19')).toBe(true);
    expect(satisfiesMinimum('20.20.2', '>=20.19')).toBe(true);
    expect(satisfiesMinimum('22.1.0', '>=20.19')).toBe(true);
    expect(satisfiesMinimum('20.18.3', '>=20.19')).toBe(false);
    expect(satisfiesMinimum('18.20.0', '>=20.19')).toBe(false);
    expect(satisfiesMinimum('v20.19.1', '>= 20.19.1')).toBe(true);
    expect(satisfiesMinimum('20.19.0', '>=20.19.1')).toBe(false);
  });
});
