import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditWriter } from './audit.writer';
import { UserLogin } from './user-login.entity';
import { UserLogout } from './user-logout.entity';

/** The permanent sign-in and sign-out trails. Written to by login and sessions; never calls back. */
@Global()
@Module({ imports: [TypeOrmModule.forFeature([UserLogin, UserLogout])], providers: [AuditWriter], exports: [AuditWriter] })
export class AuditModule {}
