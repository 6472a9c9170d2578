import { Module } from '@nestjs/common';
import { LogoutController } from './logout.controller';
import { LogoutService } from './logout.service';
import { RevokeTokensController } from './revoke-tokens.controller';
import { SessionController } from './session.controller';
import { SessionRevocation } from './session-revocation.service';
import { StreamController } from './stream.controller';
import { StreamRegistry } from './stream-registry.service';

/** Session lifetime: the caller's session, revocation, logout and the streams cut with it. */
@Module({
  controllers: [SessionController, LogoutController, RevokeTokensController, StreamController],
  providers: [SessionRevocation, LogoutService, StreamRegistry],
  exports: [SessionRevocation],
})
export class SessionsModule {}
