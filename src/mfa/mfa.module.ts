import { Global, Module } from '@nestjs/common';
import { MfaMockController } from './mfa-mock.controller';
import { MfaProvider } from './mfa.provider';
import { OtpMfaProvider } from './otp-mfa.provider';

/**
 * The second factor (service.md 5.3): the one shipped one-time-passcode provider bound to the
 * MfaProvider port, and the bundled mock endpoint it talks to by default.
 */
@Global()
@Module({
  controllers: [MfaMockController],
  providers: [{ provide: MfaProvider, useClass: OtpMfaProvider }],
  exports: [MfaProvider],
})
export class MfaModule {}
