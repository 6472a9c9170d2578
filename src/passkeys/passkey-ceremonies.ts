import { Inject, Injectable, Logger } from '@nestjs/common';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { FailureTypeId } from '../sign-in-trail/audit.types';
import { badRequest } from '../common/problem';
import { AppSettings, SETTINGS } from '../config/config.module';
import { CHALLENGE_LIFETIME_MS } from './passkey-challenges';
import { NewPasskey, PasskeyCredential, UserPasskeyRepository } from './user-passkey.repository';
import { messageOf } from '../common/errors';
import { ForegroundWork } from '../common/foreground-work';

/**
 * @simplewebauthn/server, loaded at the first ceremony rather than at start: with its certificate and
 * COSE parsers it cost about 0.1 CPU s of every start (issue 33), for a feature many installs
 * never use. Node.js caches it after the first call.
 */
function webauthn(): typeof import('@simplewebauthn/server') {
  return require('@simplewebauthn/server') as typeof import('@simplewebauthn/server');
}

/** What the browser reported, as far as it names a credential. */
type AnyResponse = { id?: unknown } | null | undefined;

/** The raw credential id a response names (its `id`, base64url), or null when it names none usable. */
export function credentialIdOf(response: unknown): Buffer | null {
  const id = (response as AnyResponse)?.id;
  // WebAuthn credential ids are at most 1023 bytes: 1364 base64url characters.
  if (typeof id !== 'string' || id.length < 16 || id.length > 1364 || !/^[A-Za-z0-9_-]+$/.test(id)) return null;
  return Buffer.from(id, 'base64url');
}

/** The verdict on an assertion: accepted, or the FailureTypeId that refuses it (14 or 15). */
export type AssertionVerdict = true | FailureTypeId.PasskeyAssertionInvalid | FailureTypeId.PasskeyPolicy;

/**
 * The WebAuthn ceremonies (contract 20) through @simplewebauthn/server, with the service's policy:
 * the relying party and origins, user verification, device-bound only, and the counter rule. The
 * library checks signatures, challenges, origins and the relying party; the policy is checked here,
 * after the signature, so that a forged assertion is a 14 and a genuine one refused by policy a 15.
 */
@Injectable()
export class PasskeyCeremonies {
  private readonly logger = new Logger('Passkeys');

  constructor(
    @Inject(SETTINGS) private readonly settings: AppSettings,
    private readonly passkeys: UserPasskeyRepository,
    private readonly foreground: ForegroundWork,
  ) {}

  /** What every response must carry: this challenge, one of our origins, our relying party. */
  private expected(challenge: Buffer): { expectedChallenge: string; expectedOrigin: string[]; expectedRPID: string } {
    return { expectedChallenge: challenge.toString('base64url'), expectedOrigin: this.settings.passkeyOrigins, expectedRPID: this.settings.passkeyRelyingPartyId };
  }

  /** Creation options: a discoverable credential (resident key required), user verification as set, the user's other credentials excluded. */
  async registrationOptions(user: { id: number; name: string }, challenge: Buffer): Promise<PublicKeyCredentialCreationOptionsJSON> {
    const exclude = await this.passkeys.credentialsOf(user.id);
    return webauthn().generateRegistrationOptions({
      rpName: 'Transaction Monitoring',
      rpID: this.settings.passkeyRelyingPartyId,
      userName: user.name,
      userDisplayName: user.name,
      // The user handle names the account to the authenticator; the registry id, never the name.
      userID: new TextEncoder().encode(`tm-user-${user.id}`),
      challenge: new Uint8Array(challenge),
      timeout: CHALLENGE_LIFETIME_MS,
      attestationType: 'none',
      excludeCredentials: exclude.map((c) => ({ id: c.credentialId.toString('base64url'), transports: transportsOf(c.transports) })),
      authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: this.settings.passkeyUserVerification },
    });
  }

  /**
   * Checks a registration response against its challenge and the policy; what to store, or a 400
   * problem saying what was refused.
   */
  async verifyRegistration(response: unknown, challenge: Buffer | null): Promise<Omit<NewPasskey, 'userRegistryId' | 'name' | 'createdDate'>> {
    if (!challenge) throw badRequest('The registration challenge is unknown, used or expired; ask for new options.');
    let info;
    try {
      const verified = await webauthn().verifyRegistrationResponse({
        response: response as RegistrationResponseJSON,
        ...this.expected(challenge),
        requireUserVerification: this.settings.passkeyUserVerification === 'required',
      });
      if (!verified.verified) throw new Error('not verified');
      info = verified.registrationInfo;
    } catch (error) {
      throw badRequest(`The passkey was not accepted: ${messageOf(error).slice(0, 200)}`);
    }
    if (this.settings.passkeyDeviceBoundOnly && info.credentialDeviceType === 'multiDevice') {
      throw badRequest('Synced passkeys are not accepted here (PasskeyDeviceBoundOnly): use a device-bound one, such as a security key.');
    }
    const transports = (response as RegistrationResponseJSON).response?.transports;
    return {
      credentialId: Buffer.from(info.credential.id, 'base64url'),
      publicKey: Buffer.from(info.credential.publicKey),
      signCount: String(info.credential.counter),
      transports: Array.isArray(transports) ? transports.filter((t) => typeof t === 'string' && /^[a-z-]{1,16}$/.test(t)).slice(0, 6).join(',') || null : null,
      aaguid: /^[0-9a-f-]{36}$/i.test(info.aaguid) ? info.aaguid : null,
      backupEligible: info.credentialDeviceType === 'multiDevice',
      backedUp: info.credentialBackedUp,
    };
  }

  /** Request options; `allow` names the credentials of a known user (the second factor), none for a discoverable sign-in. */
  authenticationOptions(challenge: Buffer, allow: Array<{ credentialId: Buffer; transports: string | null }> = []): Promise<PublicKeyCredentialRequestOptionsJSON> {
    return webauthn().generateAuthenticationOptions({
      rpID: this.settings.passkeyRelyingPartyId,
      challenge: new Uint8Array(challenge),
      timeout: CHALLENGE_LIFETIME_MS,
      userVerification: this.settings.passkeyUserVerification,
      allowCredentials: allow.map((c) => ({ id: c.credentialId.toString('base64url'), transports: transportsOf(c.transports) })),
    });
  }

  /**
   * Checks an assertion of `credential` against `challenge` (null: unknown, used or expired: 14),
   * then the policy (15): user verification, a synced credential under PasskeyDeviceBoundOnly, the
   * counter. A counter of 0 is always accepted and leaves the stored one as it was (synced passkeys
   * never count); a non-zero one must move the stored one forward, atomically.
   */
  async verifyAssertion(credential: PasskeyCredential, response: unknown, challenge: Buffer | null): Promise<AssertionVerdict> {
    return (await this.checkAssertion(credential, response, challenge)).verdict;
  }

  /**
   * {@link verifyAssertion}, also saying whether the authenticator verified its user (UV flag): under
   * `PasskeyUserVerification=preferred` an accepted assertion without it is one factor only.
   */
  async checkAssertion(credential: PasskeyCredential, response: unknown, challenge: Buffer | null): Promise<{ verdict: AssertionVerdict; userVerified: boolean }> {
    const refused = (verdict: AssertionVerdict): { verdict: AssertionVerdict; userVerified: boolean } => ({ verdict, userVerified: false });
    if (!challenge) return refused(FailureTypeId.PasskeyAssertionInvalid);
    let info;
    // A sign-in's CPU-bound step, like a password's hash: background work (sealer, sinks) yields while it runs or waits.
    this.foreground.begin();
    try {
      const verified = await webauthn().verifyAuthenticationResponse({
        response: response as AuthenticationResponseJSON,
        ...this.expected(challenge),
        // The counter and user verification are the policy's (15), checked below once the signature holds.
        credential: { id: credential.credentialId.toString('base64url'), publicKey: new Uint8Array(credential.publicKey), counter: 0 },
        requireUserVerification: false,
      });
      if (!verified.verified) return refused(FailureTypeId.PasskeyAssertionInvalid);
      info = verified.authenticationInfo;
    } catch {
      return refused(FailureTypeId.PasskeyAssertionInvalid);
    } finally {
      this.foreground.end();
    }
    if (this.settings.passkeyUserVerification === 'required' && !info.userVerified) return refused(FailureTypeId.PasskeyPolicy);
    if (this.settings.passkeyDeviceBoundOnly && info.credentialDeviceType === 'multiDevice') return refused(FailureTypeId.PasskeyPolicy);
    const accepted = { verdict: true as const, userVerified: info.userVerified };
    if (info.newCounter === 0) {
      // Only a change of the backed-up flag is written: a synced passkey's sign-in costs no UPDATE.
      if (info.credentialBackedUp !== credential.backedUp) await this.passkeys.noteBackedUp(credential.id, info.credentialBackedUp);
      return accepted;
    }
    if (!(await this.passkeys.advanceCounter(credential.id, info.newCounter, info.credentialBackedUp))) {
      this.logger.warn(
        `passkey ${credential.id} of user ${credential.userRegistryId}: signature counter ${info.newCounter} is not above the stored ${credential.signCount} (a cloned authenticator?); refused`,
      );
      return refused(FailureTypeId.PasskeyPolicy);
    }
    return accepted;
  }
}

function transportsOf(stored: string | null): AuthenticatorTransportLike[] | undefined {
  return stored ? (stored.split(',') as AuthenticatorTransportLike[]) : undefined;
}

type AuthenticatorTransportLike = 'ble' | 'cable' | 'hybrid' | 'internal' | 'nfc' | 'smart-card' | 'usb';
