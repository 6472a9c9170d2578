import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { RegistryTablesModule } from '../users/registry-tables.module';
import { PasskeyCeremonies } from './passkey-ceremonies';
import { PasskeyChallenge } from './passkey-challenge.entity';
import { PasskeyChallengeRepository } from './passkey-challenge.repository';
import { PasskeyChallenges } from './passkey-challenges';
import { PasskeyFactor } from './passkey-factor';
import { PasskeyUsageWriter } from './passkey-usage.writer';
import { PasskeysController, UserPasskeysController } from './passkeys.controller';
import { PasskeysScheduler } from './passkeys.scheduler';
import { Passkeys } from './passkeys.service';
import { UserPasskey } from './user-passkey.entity';
import { UserPasskeyRepository } from './user-passkey.repository';

/**
 * Passkeys (contract 20): the UserPasskey and PasskeyChallenge tables, the WebAuthn ceremonies, a
 * user's passkeys (own and administrators' routes) and the second factor. The sign-in scheme itself is
 * one strategy of the one flow (login/passkey.scheme.ts), so login depends on this module, never the
 * other way.
 */
@Module({
  imports: [TypeOrmModule.forFeature([UserPasskey, PasskeyChallenge]), RegistryTablesModule],
  controllers: [PasskeysController, UserPasskeysController],
  providers: [
    UserPasskeyRepository,
    PasskeyChallengeRepository,
    PasskeyChallenges,
    PasskeyCeremonies,
    PasskeyUsageWriter,
    PasskeyFactor,
    Passkeys,
    PasskeysScheduler,
  ],
  exports: [UserPasskeyRepository, PasskeyChallenges, PasskeyCeremonies, PasskeyUsageWriter, PasskeyFactor],
})
export class PasskeysModule {}
