import { Global, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { AccessGuard } from './access.guard';
import { ApiKeyValidator } from './api-key.validator';
import { Authenticator } from './authenticator.service';
import { SessionCookies } from './cookies';
import { JwtStrategy } from './jwt.strategy';
import { TokenService } from './token.service';
import { UserStateReader } from './user-state.reader';

/** Request authentication: the global deny-by-default guard and the credential strategies. */
@Global()
@Module({
  imports: [PassportModule],
  providers: [
    TokenService,
    SessionCookies,
    UserStateReader,
    JwtStrategy,
    ApiKeyValidator,
    Authenticator,
    { provide: APP_GUARD, useClass: AccessGuard },
  ],
  exports: [TokenService, SessionCookies, UserStateReader, Authenticator, ApiKeyValidator],
})
export class AuthModule {}
