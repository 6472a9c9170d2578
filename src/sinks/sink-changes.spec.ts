import { SinkChanges, SinkSnapshot } from './sink-changes';

const sink: SinkSnapshot = {
  name: 'splunk',
  type: 'webhook',
  url: 'https://siem.example/services/collector',
  format: 'ocsf',
  secret: 'signing-key-0123456789',
  headers: { Authorization: 'Splunk abc' },
  active: true,
  nextLeafIndex: 7,
};

describe('SinkChanges.describe (contract 18 Changes for contract 19 sinks)', () => {
  it('a creation: every field [null, after], secrets and header values as (secret), keys sorted, no spaces', () => {
    const changes = SinkChanges.describe(null, sink);
    expect(Object.keys(changes)).toEqual(['active', 'format', 'headers', 'name', 'nextLeafIndex', 'secret', 'type', 'url']);
    expect(SinkChanges.text(changes)).toBe(
      '{"active":[null,true],"format":[null,"ocsf"],"headers":[null,{"Authorization":"(secret)"}],"name":[null,"splunk"],"nextLeafIndex":[null,7],' +
        '"secret":[null,"(secret)"],"type":[null,"webhook"],"url":[null,"https://siem.example/services/collector"]}',
    );
    expect(SinkChanges.text(changes)).not.toContain('Splunk abc');
    expect(SinkChanges.text(changes)).not.toContain('signing-key');
  });

  it('a change lists only what changed; a new secret or header value shows as (secret) on both sides', () => {
    expect(SinkChanges.describe(sink, { ...sink, active: false })).toEqual({ active: [true, false] });
    expect(SinkChanges.describe(sink, { ...sink, secret: 'another-key-0123456789' })).toEqual({ secret: ['(secret)', '(secret)'] });
    expect(SinkChanges.describe(sink, { ...sink, headers: { Authorization: 'Splunk def' } })).toEqual({
      headers: [{ Authorization: '(secret)' }, { Authorization: '(secret)' }],
    });
    expect(SinkChanges.describe(sink, { ...sink, headers: { Authorization: 'Splunk abc' } })).toEqual({});
    expect(SinkChanges.describe(sink, sink)).toEqual({});
  });

  it('a replay and a deletion', () => {
    expect(SinkChanges.describe(sink, { ...sink, nextLeafIndex: 0 })).toEqual({ nextLeafIndex: [7, 0] });
    const deleted = SinkChanges.describe(sink, null);
    expect(deleted.secret).toEqual(['(secret)', null]);
    expect(deleted.name).toEqual(['splunk', null]);
  });
});
