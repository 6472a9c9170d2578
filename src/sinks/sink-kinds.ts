/**
 * The vocabularies of a sink (contract 19), once: the API names and the table's ids. Everything else
 * (validation, answers, changes, delivery) loops over these.
 */
export const SINK_TYPES = { webhook: 1, syslog: 2 } as const;
export type SinkType = keyof typeof SINK_TYPES;
export const SINK_FORMATS = { ocsf: 1, cef: 2 } as const;
export type SinkFormat = keyof typeof SINK_FORMATS;

export const sinkTypeName = (id: number): SinkType => (id === SINK_TYPES.syslog ? 'syslog' : 'webhook');
export const sinkFormatName = (id: number): SinkFormat => (id === SINK_FORMATS.cef ? 'cef' : 'ocsf');

/** How a configured header value is served back (contract 19). */
export const MASK = '****';
