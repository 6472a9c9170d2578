import { Module } from '@nestjs/common';
import { SessionsModule } from '../sessions/sessions.module';
import { UsersModule } from '../users/users.module';
import { NegotiateController } from './negotiate.controller';
import { NegotiateSignIn } from './negotiate.service';
import { NegotiateStrategy } from './negotiate.strategy';
import { OAuthController } from './oauth.controller';
import { OAuthSignIn } from './oauth.service';
import { PasswordController } from './password.controller';
import { PasswordSignIn } from './password-sign-in.service';
import { PasswordTransport } from '../users/password-transport';
import { SignInCompletion } from './sign-in.service';

/** Sign-in flows. Depends on sessions and users, never the other way. */
@Module({
  imports: [SessionsModule, UsersModule],
  controllers: [PasswordController, NegotiateController, OAuthController],
  providers: [PasswordSignIn, SignInCompletion, NegotiateStrategy, NegotiateSignIn, OAuthSignIn],
  exports: [SignInCompletion],
})
export class LoginModule {}
