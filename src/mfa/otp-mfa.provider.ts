import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { AddressInfo } from 'node:net';
import { AppSettings, SETTINGS } from '../config/config.module';
import { MfaProvider, MfaVerification } from './mfa.provider';
import { MfaTlsTrust, postJson } from './mfa-outbound';

/** The provider gets this long to answer; after it the factor is rejected (contract 7). */
export const MFA_TIMEOUT_MS = 5000;

/** Path of the bundled mock, the endpoint used while MultifactorAuthenticationEndpoint is unset. */
export const MOCK_MFA_PATH = '/api/mfa';

/**
 * The one shipped second factor: a one-time-passcode system spoken to over HTTP (contract 7). It never
 * throws: a timeout, a non-2xx reply, an unreadable body or a TLS failure is a rejected passcode, so a
 * broken provider fails closed with a 401, never a 500.
 *
 * While the endpoint is unset it talks to this service's own mock at /api/mfa, reached on loopback at
 * the port the HTTP server actually listens on (resolved on first use, since port 0 is legal). That
 * default "works" out of the box, which is exactly why it is loudly logged: at start and on every
 * passcode it accepts.
 */
@Injectable()
export class OtpMfaProvider extends MfaProvider implements OnApplicationBootstrap {
  private readonly logger = new Logger('Mfa');
  private readonly trust: MfaTlsTrust;

  constructor(
    @Inject(SETTINGS) private readonly settings: AppSettings,
    private readonly adapterHost: HttpAdapterHost,
  ) {
    super();
    this.trust = {
      bypass: settings.outboundHttpMfaCertificateBypass,
      thumbprint: settings.outboundHttpMfaCertificateThumbprint,
    };
  }

  private get usesMock(): boolean {
    return this.settings.multifactorAuthenticationEndpoint === null;
  }

  onApplicationBootstrap(): void {
    if (this.settings.enableMultifactorAuthentication && this.usesMock) {
      this.logger.warn(
        'EnableMultifactorAuthentication is on but MultifactorAuthenticationEndpoint is unset: passcodes are checked by the bundled mock at /api/mfa, which accepts a fixed passcode. Point the endpoint at a real provider and change MultifactorAuthenticationClientKey.',
      );
    }
    if (this.trust.bypass) {
      this.logger.warn('OutboundHttpMfaCertificateBypass is on: the passcode endpoint certificate is not validated.');
    }
  }

  async verify(request: MfaVerification): Promise<{ ok: boolean }> {
    try {
      const url = this.endpoint();
      const body = JSON.stringify({
        clientId: this.settings.multifactorAuthenticationApplicationId,
        subjectName: request.userName,
        subjectCredentials: [{ methodId: 'SECURID', collectedInputs: [{ name: 'SECURID', value: request.passcode }] }],
      });
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), MFA_TIMEOUT_MS);
      let reply;
      try {
        reply = await postJson(url, { 'client-key': this.settings.multifactorAuthenticationClientKey }, body, this.trust, controller.signal);
      } finally {
        clearTimeout(timer);
      }
      if (reply.status < 200 || reply.status > 299) {
        this.logger.warn(`passcode endpoint answered ${reply.status}; factor rejected`);
        return { ok: false };
      }
      const parsed: unknown = JSON.parse(reply.body);
      const ok =
        typeof parsed === 'object' && parsed !== null && (parsed as { attemptResponseCode?: unknown }).attemptResponseCode === 'SUCCESS';
      if (ok && this.usesMock) {
        this.logger.warn('a second factor was accepted by the bundled mock /api/mfa; configure a real MultifactorAuthenticationEndpoint');
      }
      return { ok };
    } catch (error) {
      // The reason only; never the passcode or the client key.
      this.logger.warn(`passcode endpoint unusable (${String((error as { message?: unknown } | null)?.message ?? 'unknown error')}); factor rejected`);
      return { ok: false };
    }
  }

  /** The configured endpoint, or the bundled mock on loopback at the port actually listened on. */
  private endpoint(): URL {
    const configured = this.settings.multifactorAuthenticationEndpoint;
    if (configured !== null) return new URL(configured);
    const address = this.adapterHost.httpAdapter?.getHttpServer()?.address() as AddressInfo | string | null;
    if (!address || typeof address === 'string') throw new Error('the HTTP server is not listening');
    // Listening on every interface: reach ourselves on loopback; bound to one address: use that one.
    const wildcard = address.address === '::' || address.address === '0.0.0.0' || address.address === '';
    const host = wildcard ? '127.0.0.1' : address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return new URL(`http://${host}:${address.port}${MOCK_MFA_PATH}`);
  }
}
