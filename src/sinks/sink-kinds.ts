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
/** How a secret shows in an AdminChange's Changes (contract 18). */
export const SECRET = '(secret)';

/** The AdminChange action types of contract 19 (15 to 18), for the recorder of contract 18. */
export const SINK_ACTIONS = { SinkCreated: 15, SinkChanged: 16, SinkDeleted: 17, SinkReplayed: 18 } as const;
