import { concernsMaster, RecentEvents, switchedMaster } from './sentinel-events';

describe('Sentinel events (issue 24)', () => {
  it('keeps the events of this master and of its instances, not those of another master', () => {
    expect(concernsMaster('+switch-master', 'tm-master 127.0.0.1 6379 127.0.0.1 6380', 'tm-master')).toBe(true);
    expect(concernsMaster('+switch-master', 'other 127.0.0.1 6379 127.0.0.1 6380', 'tm-master')).toBe(false);
    expect(concernsMaster('+sdown', 'master tm-master 127.0.0.1 6379', 'tm-master')).toBe(true);
    expect(concernsMaster('+odown', 'master tm-master 127.0.0.1 6379 #quorum 2/2', 'tm-master')).toBe(true);
    expect(concernsMaster('+sdown', 'master other 127.0.0.1 6379', 'tm-master')).toBe(false);
    expect(concernsMaster('+sdown', 'slave 127.0.0.1:6380 127.0.0.1 6380 @ tm-master 127.0.0.1 6379', 'tm-master')).toBe(true);
    expect(concernsMaster('-sdown', 'sentinel 5a1b 127.0.0.1 26380 @ other 127.0.0.1 6379', 'tm-master')).toBe(false);
    // A name that is a prefix of another is not the other.
    expect(concernsMaster('+sdown', 'master tm-master-2 127.0.0.1 6379', 'tm-master')).toBe(false);
  });

  it('reads the old and new master of a switch', () => {
    expect(switchedMaster('tm-master 127.0.0.1 6379 127.0.0.1 6380')).toEqual({ from: '127.0.0.1:6379', to: '127.0.0.1:6380' });
    expect(switchedMaster('tm-master ::1 6379 fd00::2 6380')).toEqual({ from: '[::1]:6379', to: '[fd00::2]:6380' });
    expect(switchedMaster('tm-master 127.0.0.1')).toBeNull();
  });

  it('records the same event text once within the window, again after it, and stays bounded', () => {
    const recent = new RecentEvents(10_000, 3);
    expect(recent.first('+sdown master m 127.0.0.1 6379', 0)).toBe(true);
    expect(recent.first('+sdown master m 127.0.0.1 6379', 9_999)).toBe(false);
    expect(recent.first('-sdown master m 127.0.0.1 6379', 9_999)).toBe(true);
    expect(recent.first('+sdown master m 127.0.0.1 6379', 10_000)).toBe(true);
    for (const key of ['a', 'b', 'c']) expect(recent.first(key, 10_001)).toBe(true);
    // Beyond the capacity the oldest is forgotten: a repeat of it counts as new.
    expect(recent.first('-sdown master m 127.0.0.1 6379', 10_002)).toBe(true);
    expect(recent.first('c', 10_002)).toBe(false);
  });
});
