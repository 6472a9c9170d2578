import { Module } from '@nestjs/common';
import { SessionController } from './session.controller';
import { SessionRevocation } from './session-revocation.service';

/** Session lifetime: the caller's session, revocation, logout and the streams cut with it. */
@Module({
  controllers: [SessionController],
  providers: [SessionRevocation],
  exports: [SessionRevocation],
})
export class SessionsModule {}
