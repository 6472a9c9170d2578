import { parseArgs } from './args';

describe('audit:verify command line', () => {
  it('reads every option, in both --name value and --name=value forms', () => {
    expect(parseArgs(['--url', 'https://audit.example/base/', '--api-key=k', '--verifier-key', 'o+01234567+AQ==', '--known', 'notes.txt', '--retention', 'd/30'])).toEqual({
      url: 'https://audit.example/base',
      apiKey: 'k',
      verifierKey: 'o+01234567+AQ==',
      known: 'notes.txt',
      retentionMs: 30 * 86_400_000,
    });
    expect(parseArgs(['--url', 'http://127.0.0.1:3000', '--api-key', 'k'])).toEqual({ url: 'http://127.0.0.1:3000', apiKey: 'k', verifierKey: null, known: null, retentionMs: null });
    expect(parseArgs(['--url', 'http://h', '--api-key', 'k', '--retention', 's/1']).retentionMs).toBe(1000);
    expect(parseArgs(['--url', 'http://h', '--api-key', 'k', '--retention', 'n/5']).retentionMs).toBe(300_000);
  });

  it('says what is wrong', () => {
    expect(() => parseArgs(['--api-key', 'k'])).toThrow('--url is required');
    expect(() => parseArgs(['--url', 'http://h'])).toThrow('--api-key is required');
    expect(() => parseArgs(['--url', 'ftp://h', '--api-key', 'k'])).toThrow(/http/);
    expect(() => parseArgs(['--url', 'http://h?x=1', '--api-key', 'k'])).toThrow(/no query/);
    expect(() => parseArgs(['--url', 'nope', '--api-key', 'k'])).toThrow(/not a URL/);
    expect(() => parseArgs(['--url', 'http://h', '--api-key'])).toThrow('--api-key needs a value');
    expect(() => parseArgs(['--url', 'http://h', '--api-key', 'k', '--verbose'])).toThrow(/unknown argument/);
    expect(() => parseArgs(['--url', 'http://h', '--url', 'http://i', '--api-key', 'k'])).toThrow(/twice/);
    expect(() => parseArgs(['--url', 'http://h', '--api-key', 'k', '--retention', '30d'])).toThrow(/unit\/value/);
    expect(() => parseArgs(['--url', 'http://h', '--api-key', 'k', '--retention', 'w/2'])).toThrow(/unit\/value/);
  });
});
