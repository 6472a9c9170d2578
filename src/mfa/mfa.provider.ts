/** A second-factor check (service.md 5.3). One provider ships; no configuration selects another. */
export interface MfaVerification {
  userName: string;
  passcode: string;
}

export abstract class MfaProvider {
  /** Never throws: a provider that cannot answer is a rejected factor. */
  abstract verify(request: MfaVerification): Promise<{ ok: boolean }>;
}
