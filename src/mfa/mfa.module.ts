import { Global, Injectable, Module } from '@nestjs/common';
import { MfaProvider, MfaVerification } from './mfa.provider';

/** Refuses every passcode until the one-time-passcode provider is bound (fail closed). */
@Injectable()
class RefusingMfaProvider extends MfaProvider {
  async verify(_request: MfaVerification): Promise<{ ok: boolean }> {
    return { ok: false };
  }
}

@Global()
@Module({
  providers: [{ provide: MfaProvider, useClass: RefusingMfaProvider }],
  exports: [MfaProvider],
})
export class MfaModule {}
