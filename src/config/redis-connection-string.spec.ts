import { describeRedisTarget, parseRedisConnectionString, RedisTarget } from './redis-connection-string';
import { loadSettings, SettingsError } from './settings';

function target(value: string): RedisTarget {
  const parsed = parseRedisConnectionString(value);
  if ('problem' in parsed) throw new Error(`refused ${value}: ${parsed.problem}`);
  return parsed;
}

function problem(value: string): string {
  const parsed = parseRedisConnectionString(value);
  if (!('problem' in parsed)) throw new Error(`accepted ${value}`);
  return parsed.problem;
}

describe('RedisConnectionString (contract 1, issue 24)', () => {
  it('reads one Redis, with or without credentials, database and TLS', () => {
    expect(target('redis://127.0.0.1:6379')).toEqual({
      kind: 'redis',
      address: { host: '127.0.0.1', port: 6379 },
      username: null,
      password: null,
      db: 0,
      tls: false,
    });
    expect(target('rediss://tm:p%40ss@cache.example:6380/2')).toEqual({
      kind: 'redis',
      address: { host: 'cache.example', port: 6380 },
      username: 'tm',
      password: 'p@ss',
      db: 2,
      tls: true,
    });
    expect(target('redis://:only-password@cache')).toMatchObject({ address: { host: 'cache', port: 6379 }, username: null, password: 'only-password' });
    expect(target('redis://[::1]:6390')).toMatchObject({ address: { host: '::1', port: 6390 } });
  });

  it('reads the documented Sentinel form with one or many Sentinels, default port 26379', () => {
    expect(target('sentinel://host:26379,host:26380/mymaster')).toEqual({
      kind: 'sentinel',
      sentinels: [
        { host: 'host', port: 26379 },
        { host: 'host', port: 26380 },
      ],
      masterName: 'mymaster',
      username: null,
      password: null,
      sentinelUsername: null,
      sentinelPassword: null,
      db: 0,
      tls: false,
    });
    expect(target('sentinel://10.0.0.1/mymaster')).toMatchObject({ sentinels: [{ host: '10.0.0.1', port: 26379 }], masterName: 'mymaster' });
    expect(target('sentinel://a.example, b.example:26380 ,[fd00::3]:26381/mymaster/3')).toMatchObject({
      sentinels: [
        { host: 'a.example', port: 26379 },
        { host: 'b.example', port: 26380 },
        { host: 'fd00::3', port: 26381 },
      ],
      db: 3,
    });
  });

  it('puts the master password before the Sentinels and the Sentinels\' own password in the query', () => {
    expect(target('sentinel://:redis%2Fpass@h1:26379,h2:26380/mymaster?sentinelPassword=s%26p')).toMatchObject({
      username: null,
      password: 'redis/pass',
      sentinelUsername: null,
      sentinelPassword: 's&p',
    });
    expect(target('sentinels://app:pw@h1,h2/my-master?sentinelUsername=watch&sentinelPassword=sp')).toMatchObject({
      username: 'app',
      password: 'pw',
      sentinelUsername: 'watch',
      sentinelPassword: 'sp',
      tls: true,
    });
  });

  it('describes the target without credentials', () => {
    expect(describeRedisTarget(target('sentinel://:secret@h1:26379,[::1]:26380/mymaster?sentinelPassword=other'))).toBe('sentinel:h1:26379,[::1]:26380/mymaster');
    expect(describeRedisTarget(target('redis://user:secret@cache:6380/2'))).toBe('cache:6380');
  });

  it('refuses a malformed value with a reason that never repeats it', () => {
    const cases: Array<[string, RegExp]> = [
      ['http://cache:6379', /^expected redis:\/\//],
      ['cache:6379', /^expected redis:\/\//],
      ['sentinel://h1:26379,h2:26380', /master name is missing/],
      ['sentinel://h1:26379,h2:26380/', /master name is missing/],
      ['sentinel://h1:26379,,h2:26380/mymaster', /Sentinel 2 of 3 is empty/],
      ['sentinel://h1:26379,/mymaster', /Sentinel 2 of 2 is empty/],
      ['sentinel:///mymaster', /Sentinel 1 of 1 is empty/],
      ['sentinel://h1:0/mymaster', /Sentinel 1 of 1 is not a host\[:port\]/],
      ['sentinel://h1:65536/mymaster', /Sentinel 1 of 1 is not/],
      ['sentinel://h1:port/mymaster', /Sentinel 1 of 1 is not/],
      ['sentinel://h 1:26379/mymaster', /Sentinel 1 of 1 is not/],
      ['sentinel://[nothex]:26379/mymaster', /Sentinel 1 of 1 is not/],
      ['sentinel://h1:26379,h1:26379/mymaster', /Sentinel 2 of 2 repeats/],
      ['sentinel://h1/mymaster/db', /only a database number/],
      ['sentinel://h1/mymaster/1/2', /only a database number/],
      ['sentinel://h1/my%0Amaster', /control characters/],
      ['sentinel://h1/mymaster?sentinelpassword=s3cret', /unknown query parameter; only sentinelUsername and sentinelPassword/],
      ['sentinel://h1/mymaster?sentinelPassword=a&sentinelPassword=b', /given twice/],
      ['sentinel://:bad%zz@h1/mymaster', /not validly percent-encoded/],
      ['sentinel://h1/mymaster#x', /percent-encoded \(%23\)/],
      [`sentinel://${Array.from({ length: 33 }, (_, i) => `h${i}`).join(',')}/m`, /at most 32 Sentinels/],
      ['redis://cache:6379/x', /database after the host/],
      ['redis://cache:6379?tls=true', /take no query parameters/],
      ['redis://:s3cret@', /not a URL|host is missing/],
    ];
    for (const [value, reason] of cases) {
      const text = problem(value);
      expect({ value, text }).toEqual({ value, text: expect.stringMatching(reason) });
      expect(text).not.toMatch(/s3cret/);
    }
  });

  it('refuses to start with one line naming the setting', () => {
    let thrown: unknown;
    try {
      loadSettings({ RedisConnectionString: 'sentinel://:s3cret@h1:26379,,h2:26380/mymaster' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(SettingsError);
    expect((thrown as SettingsError).problems).toEqual(['RedisConnectionString: Sentinel 2 of 3 is empty (a stray comma?); expected host[:port],host[:port]…']);
    expect((thrown as SettingsError).message).not.toMatch(/s3cret/);
    expect(loadSettings({ RedisConnectionString: 'sentinel://h1:26379,h2:26380,h3:26381/mymaster' }).redisConnectionString).toBe(
      'sentinel://h1:26379,h2:26380,h3:26381/mymaster',
    );
  });
});
