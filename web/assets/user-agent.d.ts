/** Types for user-agent.js (a plain browser module), so its unit spec type-checks. */
export declare function describeUserAgent(agent: string | null | undefined): string;
